"""A model of NLLB-200-distilled-600M's shape (12 + 12 layers x 16 heads, small width) in the served app at 1366 x 768:
Explore opens on the mean of the heads, any one of the 192 heads per kind is two clicks away (the stepper's Heads
button, then the head in its layer x head matrix; or a layer's name in the mean view, then the head's name in that
layer's row), the head shown is that head's own weights (the Trace's row), the server hears it (the link names
it), and a layer's 16 heads are offered side by side with labels that are readable (12 px or more, never cut)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import numpy as np
import pytest
from attention_lens.model.engine.loader import load_engine

from harness.browser import CHROMIUM, IDLE, launch
from harness.models import hf_big
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (installed by .ci/run)"),
]

TEXT = "the cat sat on the mat ."
STEPPER = ".st-key-attention [data-testid=lens-stepper]"
DRAWN = f"() => !!document.querySelector('{STEPPER} canvas')"
# JS: what the stepper shows: its view (the Heads button's), the picture's description, and per panel its layer,
# heads and the current row's weights
SHOWN = f"""() => {{ const s = document.querySelector('{STEPPER}');
  return {{view: s.querySelector('.lens-choose').dataset.view, label: s.querySelector('.lens-picture').ariaLabel,
    step: Number(s.dataset.step),
    panels: [...s.querySelectorAll('.lens-panel')].map(p => ({{layer: Number(p.dataset.layer),
      heads: p.dataset.heads, row: JSON.parse(p.dataset.row || '[]')}}))}}; }}"""
# JS: every label a layer's row of heads shows (panel titles, row and column labels that are shown), with its font
# size and whether its text is cut (wider than its box) or hidden
LABELS = f"""() => [...document.querySelectorAll('{STEPPER} .lens-ptitle, {STEPPER} .lens-q, {STEPPER} .lens-k')]
  .filter(e => {{ const st = getComputedStyle(e); return st.display !== 'none' && st.visibility !== 'hidden'
                  && !e.classList.contains('thin'); }})
  .map(e => ({{text: e.textContent, cls: e.className, px: parseFloat(getComputedStyle(e).fontSize),
              cut: e.classList.contains('up') ? e.scrollHeight > e.clientHeight + 1
                                               : e.scrollWidth > e.clientWidth + 1}}))"""


@pytest.fixture(scope="module")
def nllb_shape(tmp_path_factory) -> Path:
    return hf_big.build_nllb_sized(tmp_path_factory.mktemp("nllb_shape") / "nllb-shape", d_model=64, ffn=128,
                                   vocab=320, positions=128)


@pytest.fixture
def server(app_server, nllb_shape):
    return app_server(app_env(LENS_HF_MODELS=str(nllb_shape), LENS_DEFAULT_MODEL=nllb_shape.name, LENS_WARMUP="0"))


def _open(browser, server):
    page = browser.new_page(viewport={"width": 1366, "height": 768})
    page.goto(f"{server}/?text={quote(TEXT)}")
    page.wait_for_function(DRAWN, timeout=300_000)  # the first run of a fresh server, on a loaded machine
    page.locator(IDLE).wait_for(timeout=60_000)
    shown = page.evaluate(SHOWN)
    assert shown["view"] == "mean" and len(shown["panels"]) == 12, shown  # opens on the mean, a panel per layer
    return page


def _is_head(page, trace, layer: int, head: int) -> None:
    """The stepper shows layer, head (1-based) of cross-attention alone, its current row the Trace's, and the
    server heard it: the page's link names that view, layer and head."""
    shown = page.evaluate(SHOWN)
    assert shown["view"] == "head" and "Cross-attention · layer 7 · head 13" in shown["label"], shown
    (panel,) = shown["panels"]
    assert (panel["layer"], panel["heads"]) == (layer, str(head))
    want = np.asarray(trace.cross_attention)[layer - 1, head - 1, shown["step"] - 1]
    assert np.allclose(panel["row"], want, atol=1e-3), (panel["row"], want)
    page.wait_for_function("() => location.search.includes('view=head') && location.search.includes('layer=7')"
                           " && location.search.includes('head=13')", timeout=60_000)
    query = parse_qs(urlsplit(page.url).query)
    assert (query["view"], query["layer"], query["head"]) == (["head"], ["7"], ["13"])


def test_any_of_192_heads_is_two_clicks_from_the_mean_view_and_a_layer_is_offered_readable(server, nllb_shape,
                                                                                           tmp_path):
    from playwright.sync_api import sync_playwright

    engine = load_engine(nllb_shape)
    assert (engine.n_decoder_layers, engine.n_heads) == (12, 16)
    trace = engine.trace(TEXT)
    with sync_playwright() as p:
        browser = launch(p)
        try:
            # the Heads button, then the head in the layer x head matrix
            page = _open(browser, server)
            clicks = 0
            page.locator(f"{STEPPER} .lens-choose").click()
            clicks += 1
            cells = page.locator(f"{STEPPER} .lens-chooser .lens-hc")
            assert cells.count() == 12 * 16
            cell = page.locator(f"{STEPPER} .lens-hc[data-layer='7'][data-head='13']")
            assert cell.is_visible() and cell.bounding_box()["y"] + cell.bounding_box()["height"] <= 768
            page.screenshot(path=str(tmp_path / "chooser-1366.png"))
            cell.click()
            clicks += 1
            assert clicks == 2
            _is_head(page, trace, 7, 13)
            page.close()

            # a layer's name in the mean view: its 16 heads side by side, readable; then the head's name
            page = _open(browser, server)
            clicks = 0
            page.locator(f"{STEPPER} .lens-ptitle", has_text="layer 7 ").click()
            clicks += 1
            shown = page.evaluate(SHOWN)
            assert shown["view"] == "layer" and [x["heads"] for x in shown["panels"]] == [str(h) for h in range(1, 17)]
            assert {x["layer"] for x in shown["panels"]} == {7}
            labels = page.evaluate(LABELS)
            titles = [x["text"] for x in labels if "lens-ptitle" in x["cls"]]
            assert titles == [f"layer 7 · head {h}" for h in range(1, 17)]
            assert all(x["px"] >= 12 for x in labels), [x for x in labels if x["px"] < 12]
            assert not [x for x in labels if x["cut"]], [x for x in labels if x["cut"]]
            page.locator(IDLE).wait_for(timeout=60_000)
            page.screenshot(path=str(tmp_path / "layer-1366.png"))
            page.locator(f"{STEPPER} .lens-ptitle", has_text="layer 7 · head 13").click()
            clicks += 1
            assert clicks == 2
            _is_head(page, trace, 7, 13)
        finally:
            browser.close()
