"""A new visitor, in Chromium: the page opens on the everyday en-fr model; a typed question stepped to its end
shows a French sentence. LENS_UPDATE_SCREENSHOT=1 writes the README's screenshots (assets/everyday-*.png)."""

from __future__ import annotations

import os

import pytest

from harness.browser import CHIPS, IDLE, SOURCE_SHOWN
from harness.server import ROOT, app_env
from tests.browser.explore_browser import open_page, overlapping

pytestmark = [pytest.mark.browser]
STEPPER = "[data-testid=lens-stepper]"
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
QUESTION = "Where is the train station?"
# JS: Explore's stepper shows its last step (step m of m, more than one step).
AT_END = """() => { const el = document.querySelector('[data-testid=lens-stepper]');
    return !!el && !!el.dataset.m && el.dataset.step === el.dataset.m && el.dataset.m !== '1'; }"""


@pytest.fixture(scope="module")
def visitor_server(app_server):
    return app_server(app_env(LENS_WARMUP="0"))  # no other LENS_ variable: what a visitor of `./run.sh app` gets


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_a_new_visitor_types_a_question_and_reads_french(visitor_server, tmp_path, size):
    with open_page(visitor_server, *size) as page:
        page.wait_for_url("**model=everyday-en-fr**", timeout=30_000)  # the page writes its state into the URL
        box = page.locator(".st-key-source input")
        assert box.input_value() == "The cat sat on the mat."  # the everyday model's first preset
        box.fill(QUESTION)
        box.press("Enter")
        page.wait_for_function(SOURCE_SHOWN, arg=["Whereisthetrainstation?"], timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        page.locator(f"{STEPPER} .lens-last").click()
        page.wait_for_function(AT_END, timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        page.wait_for_timeout(800)
        written = " ".join(page.locator(CHIPS).all_inner_texts())
        assert "gare" in written, written
        assert page.locator("[data-testid='stException']").count() == 0
        out = ROOT / "assets" / f"everyday-{size[0]}.png" if UPDATE else tmp_path / "shot.png"
        page.screenshot(path=str(out))


# A 25-word sentence as a student types it: it stays readable in the grid, the one-head view and the mean view at
# 1366 x 768 and 1920 x 1080.
LONG = ("When I was a child, my grandmother told me stories about the big old house near the river where she "
        "grew up many years ago.")
# JS: per attention picture on the page (Explore's stepper), the boxes of its visible row and column labels (texts
# that start with a position, "3 ▁chat") and of its panel titles, to check that none of them overlap. A column
# label the stepper leaves unwritten for lack of room (.thin, transparent) or hides (past the step) is not shown.
CHART_TEXTS = """() => [...document.querySelectorAll('.st-key-attention [data-testid=lens-stepper] .lens-picture')]
  .map(chart => [...chart.querySelectorAll('.lens-q, .lens-k, .lens-ptitle')]
    .filter(t => t.getClientRects().length && getComputedStyle(t).visibility !== 'hidden'
      && !t.classList.contains('thin') && t.textContent.trim())
    .map(t => { const r = t.getBoundingClientRect();
      return {text: t.textContent, tick: /^\\d+ /.test(t.textContent), l: r.left, t: r.top, r: r.right,
              b: r.bottom}; })
    .filter(b => b.r - b.l > 0))"""


@pytest.mark.parametrize("view", ["head", "mean", "grid"])
@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_a_25_word_sentence_stays_readable(visitor_server, tmp_path, size, view):
    from urllib.parse import quote

    assert len(LONG.split()) == 25
    query = f"/?model=everyday-en-fr&text={quote(LONG)}&mode=greedy&kind=cross&view={view}&layer=3&head=1&step=99"
    with open_page(visitor_server, *size, query=query) as page:
        page.locator(IDLE).wait_for(timeout=90_000)
        page.wait_for_function(SOURCE_SHOWN, arg=["grandmother"], timeout=60_000)
        page.wait_for_timeout(800)
        charts = page.evaluate(CHART_TEXTS)
        assert charts, "no attention chart drawn"
        for texts in charts:
            ticks = [b for b in texts if b["tick"]]
            assert len(ticks) >= 2, texts[:5]
            assert not overlapping(texts), overlapping(texts)[:5]
        assert page.locator("[data-testid='stException']").count() == 0
        out = (ROOT / "assets" / f"everyday-long-{view}-{size[0]}.png") if UPDATE else tmp_path / "shot.png"
        page.screenshot(path=str(out), full_page=True)
