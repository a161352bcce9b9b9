"""Two runs under one step bar in Chromium (app/render/stepper/pair.js): Compare's two sides and their difference,
and the Leakage lab's training against inference. At every step each side's drawn row equals its run's Trace
within the packed runs' stated error, and A − B equals model.analysis.compare's difference; ten steps send
nothing to the server; the address bar keeps the step, a click elsewhere keeps it, and Copy link carries it."""

from __future__ import annotations

import os
import re
import time
import urllib.parse
from pathlib import Path

import numpy as np
import pytest
from attention_lens.model.analysis.compare import difference
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.engine import DecodeOptions

from harness.browser import CHROMIUM, IDLE, PAIR, PAIR_DIFF, PAIR_SIDE, browser_page
from harness.models.tiny import build_tiny_checkpoint
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]
F16_ERROR = 2.5e-4  # app/render/stepper: half floats, |w| <= 1; data-row rounds to 5 decimals
A_TEXT, B_TEXT = "the cat sat .", "the cat sat on the mat ."
SOURCE = "the black cat sat on the mat ."
KINDS = {"cross": "cross_attention", "dec": "decoder_self_attention", "enc": "encoder_self_attention"}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("pair_models")
    return build_tiny_checkpoint(root / "tiny-a"), build_tiny_checkpoint(root / "tiny-b", seed=1)


@pytest.fixture(scope="module")
def server(models, app_server):
    return app_server(app_env(LENS_MODEL_DIRS=os.pathsep.join(str(m) for m in models), LENS_DEFAULT_MODEL="tiny-a",
                              LENS_WARMUP="0"))


def compare_url(server: str, kind: str, layer: int, head: int, step: int = 1) -> str:
    link = {"model": "tiny-a", "a_text": A_TEXT, "b_model": "tiny-b", "b_text": B_TEXT, "kind": kind,
            "layer": str(layer), "head": str(head), "step": str(step)}
    return f"{server}/Compare?{urllib.parse.urlencode(link)}"


def ready(page, step: int) -> None:
    page.locator(f"{PAIR_SIDE} canvas").first.wait_for(state="attached", timeout=120_000)
    try:
        page.wait_for_function(f"() => document.querySelector('{PAIR}')?.dataset.step === '{step}'", timeout=30_000)
    except Exception as exc:  # say what the page shows instead
        shown = page.evaluate(f"() => [document.querySelector('{PAIR}')?.dataset.step, location.search]")
        raise AssertionError(f"step {step} not shown; the page shows step {shown[0]} at {shown[1]}") from exc


def idle(page) -> None:
    page.locator(IDLE).wait_for(timeout=120_000)


def sides(page) -> list[dict]:
    """Each side's step and its one panel's current row as drawn."""
    return page.eval_on_selector_all(PAIR_SIDE, """els => els.map(e => ({step: Number(e.dataset.step),
        m: Number(e.dataset.m), rows: [...e.querySelectorAll('.lens-panel')].map(p => JSON.parse(p.dataset.row))}))""")


def drawn_difference(page) -> tuple[list, list, np.ndarray]:
    rows, cols, values = page.eval_on_selector(
        PAIR_DIFF, "e => [e.dataset.rows, e.dataset.cols, e.dataset.values].map(x => JSON.parse(x || '[]'))")
    return rows, cols, np.array(values, dtype=float).reshape(len(rows), len(cols))


# JS: the difference's panel height, its cells' height, its key labels' bottom and its caption's top (px).
DIFF_BOXES = """(sel) => { const d = document.querySelector(sel), r = (e) => e.getBoundingClientRect();
  const keys = [...d.querySelectorAll('.lens-k')].map(r).filter(b => b.height > 0);
  return {panel: r(d.querySelector('.lens-panel')).height, cells: r(d.querySelector('.lens-cells canvas')).height,
          keys_bottom: Math.max(...keys.map(b => b.bottom)), caption_top: r(d.querySelector('.lens-caption')).top}; }"""


def picture_row(trace, kind: str, step: int, layer: int, head: int) -> np.ndarray:
    """The current row at `step` of one head (1-based) or the layer's mean (head 0), keys as the page shows."""
    w = getattr(trace, kind)[layer - 1]
    w = w.mean(axis=0) if head == 0 else w[head - 1]
    keys = step if kind == "decoder_self_attention" else w.shape[-1]
    return w[step - 1, :keys]


@pytest.mark.parametrize(("kind", "layer", "head"), [("cross", 2, 0), ("dec", 1, 3)])
def test_compare_steps_draw_both_runs_and_their_difference(server, models, kind, layer, head):
    a = BuiltinEngine.load(models[0]).trace(A_TEXT, options=DecodeOptions())
    b = BuiltinEngine.load(models[1]).trace(B_TEXT, options=DecodeOptions())
    name, top = KINDS[kind], max(a.m, b.m)
    with browser_page(compare_url(server, kind, layer, head), 1366, 768, device_scale_factor=1) as page:
        ready(page, 1)
        idle(page)
        assert int(page.locator(PAIR).get_attribute("data-m")) == top
        for step in range(1, min(top, 12) + 1):
            if step > 1:
                page.keyboard.press("ArrowRight")
            ready(page, step)
            shown = sides(page)
            for side, trace in zip(shown, (a, b)):
                s = min(step, trace.m)
                assert (side["step"], side["m"]) == (s, trace.m)
                assert len(side["rows"]) == 1  # one head, or the layer's mean
                seen = np.array([np.nan if v is None else v for v in side["rows"][0]])
                want = picture_row(trace, name, s, layer, head)
                np.testing.assert_allclose(seen[: len(want)], want, atol=F16_ERROR, err_msg=f"step {step}")
            diff = difference(a, b, name, min(step, a.m), min(step, b.m), layer, head or None)
            rows, cols, values = drawn_difference(page)
            assert (rows, cols) == (diff.rows, diff.cols), step
            np.testing.assert_allclose(values, diff.values, atol=2 * F16_ERROR, err_msg=f"step {step}")
            box = page.evaluate(DIFF_BOXES, PAIR_DIFF)
            # the difference's picture has its height: its cells and key labels above its caption, not over it (the
            # panel contains its size, and a height was set only for the sides' panels: it had none)
            assert box["panel"] >= box["cells"] > 0, (step, box)
            assert box["keys_bottom"] <= box["caption_top"] + 0.5, (step, box)


def test_ten_steps_send_nothing_and_the_step_stays(server):
    with browser_page("about:blank", 1366, 768, device_scale_factor=1) as page:
        sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(time.monotonic())))
        page.goto(compare_url(server, "cross", 1, 2))
        ready(page, 1)
        idle(page)
        page.wait_for_timeout(500)
        assert int(page.locator(PAIR).get_attribute("data-m")) >= 8
        before = len(sent)
        for _ in range(4):  # ten steps: the bar's Next four times, then the keys (to step 8 and back to 5)
            page.locator(f"{PAIR} > .lens-bar .lens-next").click()
        for key in ["ArrowRight"] * 3 + ["ArrowLeft"] * 3:
            page.keyboard.press(key)
        ready(page, 5)
        page.wait_for_timeout(1000)
        assert len(sent) - before == 0  # not one message: no script run, no widget value
        page.wait_for_function("() => new URL(location.href).searchParams.get('step') === '5'", timeout=10_000)
        # a server-side switch (the head) after stepping in the browser: the page keeps step 5
        page.locator(".st-key-cmp_head").get_by_role("combobox").click()
        page.get_by_role("option", name="3", exact=True).click()
        # the server's run for head 3 is on the page (a loaded machine can take long), then its step
        page.wait_for_function(f"() => document.querySelector('{PAIR} .lens-pair-sub')?.textContent.endsWith('head 3')",
                               timeout=120_000)
        idle(page)
        ready(page, 5)
        assert page.locator(PAIR_SIDE).first.locator(".lens-panel").count() == 1
        assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["step"] == ["5"]
        assert urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)["head"] == ["3"]


def test_training_vs_inference_steps_in_the_browser_and_links_the_step(server, models):
    engine = BuiltinEngine.load(models[0])
    greedy = engine.trace(SOURCE, options=DecodeOptions())
    reference = engine.detokenize([s.id for s in greedy.steps[:4]]) + " le chat ."
    tf = engine.trace(SOURCE, reference, options=DecodeOptions(mode="teacher_forced"))
    link = {"model": "tiny-a", "text": SOURCE, "target": reference, "view": "exposure", "step": "1"}
    with browser_page(f"{server}/Leakage_lab?{urllib.parse.urlencode(link)}", 1366, 768,
                      device_scale_factor=1) as page:
        ready(page, 1)
        idle(page)
        m = int(page.locator(PAIR).get_attribute("data-m"))
        assert m == min(tf.m, greedy.m)
        layer = tf.cross_attention.shape[0]  # the view opens on the last layer, the mean of its heads
        sent = []
        page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(1)))
        for step in range(1, m + 1):
            if step > 1:
                page.keyboard.press("ArrowRight")
            ready(page, step)
            for side, trace in zip(sides(page), (tf, greedy)):
                want = trace.cross_attention[layer - 1].mean(axis=0)[step - 1]
                np.testing.assert_allclose(side["rows"][0], want, atol=F16_ERROR, err_msg=f"step {step}")
            note = page.locator(f"{PAIR} .lens-pair-note").inner_text()
            assert note.startswith(f"Row {step}:") and re.search(r"equal|different", note)
        assert not sent  # every step drawn in the browser
        page.wait_for_function(f"() => new URL(location.href).searchParams.get('step') === '{m}'", timeout=10_000)
        page.get_by_role("button", name=re.compile("Copy link")).click()
        code = page.locator("[data-testid=stPopoverBody] code, [data-testid=stPopover] code").first
        code.wait_for(timeout=30_000)
        assert urllib.parse.parse_qs(urllib.parse.urlparse(code.inner_text().strip()).query)["step"] == [str(m)]
