"""The space Explore's stepper keeps for a run (app/render/stepper, on a plain page as harness/stepper_page
serves it, fed everyday-en-fr's runs): a picture is laid out once as tall as its tallest step, so until the last
step there is space under the rows drawn so far. That space is shown as the room for the steps to come (it was a
blank under the picture), two runs side by side are levelled to the taller (their step panels were not level),
and a picture in a scrolling box that holds rows below what it shows says so on a button that scrolls to them
(Mean view's third layer was cut with no scroll bar in sight)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import CHROMIUM, launch
from harness.stepper_page import ROOT, packed_run, step_to, stepper_files, stepper_page

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]

# JS: where the room for the steps to come shows (its clip's top as a page coordinate), the bottom of what is drawn
# (the lowest key label shown) and the picture's own box.
ROOM = """() => { const pic = document.querySelector('.lens-stepper .lens-picture');
  const room = pic.querySelector('.lens-room'); if (!room) return null;
  const r = room.getBoundingClientRect(), p = pic.getBoundingClientRect(), cs = getComputedStyle(room);
  const clip = /inset\\(([\\d.]+)px/.exec(cs.clipPath);
  const labels = [...pic.querySelectorAll('.lens-k:not(.hidden)')].map(e => e.getBoundingClientRect().bottom);
  const text = room.querySelector('.lens-room-text');
  return {shown: cs.visibility === 'visible', top: r.top + (clip ? Number(clip[1]) : 0), bottom: r.bottom,
          box: [room.offsetTop, room.offsetHeight], picBottom: p.bottom, drawn: Math.max(...labels),
          worded: !!text && getComputedStyle(text).visibility === 'visible' ? text.textContent : ''}; }"""


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = launch(p)
        try:
            yield b
        finally:
            b.close()


def test_the_space_kept_for_the_steps_to_come_is_shown_as_such_and_stays_put(browser):
    pg = stepper_page(browser, stepper_files(str(ROOT)), packed_run("grid", "cross_attention"), 1366, 900)
    m = int(pg.evaluate("() => document.querySelector('.lens-stepper').dataset.m"))
    step_to(pg, 1)
    first = pg.evaluate(ROOM)
    assert first is not None, "no room for the steps to come: a blank under the picture"
    assert first["shown"] and first["worded"], first
    # it starts right under the key labels drawn and ends at the picture's bottom
    assert first["drawn"] <= first["top"] <= first["drawn"] + 8, first
    assert abs(first["bottom"] - first["picBottom"]) <= 1, first
    for step in (2, m // 2):
        step_to(pg, step)
        now = pg.evaluate(ROOM)
        assert now["box"] == first["box"], step  # laid out once: a step moves its clip only
        assert now["shown"] and now["drawn"] <= now["top"] <= now["drawn"] + 8, (step, now)
    step_to(pg, m)
    assert not pg.evaluate(ROOM)["shown"]  # the last step fills the picture
    pg.close()


def test_a_scrolling_mean_picture_names_the_rows_below_and_scrolls_to_them(browser):
    run = packed_run("mean", "cross_attention", "the zyzzyva ate my homework!!")
    pg = stepper_page(browser, stepper_files(str(ROOT)), run, 1366, 768)
    # as wide as Explore's stepper at 1366 x 768: the three layers' panels wrap two and one
    pg.evaluate("() => { document.getElementById('host').style.width = '906px'; }")
    pg.wait_for_function("() => document.querySelectorAll('.lens-prow').length === 2")
    step_to(pg, int(pg.evaluate("() => document.querySelector('.lens-stepper').dataset.m")))
    last_row = """() => { const p = document.querySelector('.lens-stepper .lens-picture');
      const o = [...p.querySelectorAll('.lens-panel')].pop().querySelector('.lens-outline');
      return {row: o.getBoundingClientRect().bottom, box: p.getBoundingClientRect().bottom}; }"""
    cut = pg.evaluate(last_row)
    assert cut["row"] > cut["box"] + 1, cut  # layer 3's last row is below what the box shows
    more = pg.locator(".lens-stepper .lens-more-btn")
    assert more.is_visible(), "rows below the box and nothing says so"
    assert "layer 3" in more.inner_text()
    more.click()
    pg.wait_for_function(f"() => {{ const r = ({last_row})(); return r.row <= r.box + 1; }}")
    pg.wait_for_function("() => getComputedStyle(document.querySelector('.lens-more')).visibility === 'hidden'")
    pg.close()


def pair_run(sentences: list[str]) -> bytes:
    """everyday-en-fr's runs of `sentences` under one step bar, packed as Compare packs them (one head each)."""
    from attention_lens.app.render import stepper
    from attention_lens.model.engine import load_engine

    engine = load_engine(ROOT / "checkpoints" / "everyday-en-fr")
    blobs, ms = [], []
    for i, sentence in enumerate(sentences):
        trace = engine.trace(sentence)
        ms.append(trace.m)
        extra = {"run_id": f"side{i}", "seq": 0, "step": 1, "kind": "cross_attention", "view": "head", "layer": 0,
                 "head": 0, "scale": "fixed", "present": False, "picture": "attention", "caption": "",
                 "sync": False, "url_step": False}
        blobs.append(stepper.pack(trace, special=engine.special_pieces(), extra=extra))
    return stepper.pack_pair(blobs, {"run_id": "pair", "seq": 1, "step": 1, "m": max(ms),
                                     "titles": [["A"], ["B"]], "notes": None, "mark_row": None, "diff": None,
                                     "url_step": False, "sync": False, "present": False})


def test_two_runs_side_by_side_have_their_step_panels_level_at_every_step(browser):
    run = pair_run(["The dog sat near the bank of the river.", "The man found the bank."])
    pg = stepper_page(browser, stepper_files(str(ROOT)), run, 1366, 900)
    tops = """() => [...document.querySelectorAll('[data-testid=lens-pair-side] .lens-stepno')]
      .map(e => Math.round(e.getBoundingClientRect().top))"""
    m = int(pg.evaluate("() => document.querySelector('.lens-stepper').dataset.m"))
    seen = []
    for step in (1, 2, m):
        step_to(pg, step)
        a, b = pg.evaluate(tops)
        assert abs(a - b) <= 1, (step, a, b)  # level (B's was 50 px lower)
        seen.append(a)
    assert len(set(seen)) == 1, seen  # and they stay put while stepping
    pg.close()
