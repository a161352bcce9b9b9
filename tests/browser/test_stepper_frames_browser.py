"""What one step of Explore's stepper changes in Chromium (app/render/stepper, on a plain page, fed everyday-en-fr's
run of the stepper benchmark's sentence, as harness/stepper_page serves it): only what the step changes. The
grid's twelve panels keep their boxes as laid out from step to step (nothing is laid out or painted again under a
panel: a row of panels under another is moved up by a transform), the labels of the keys are the same elements
after five steps with no box of their own (no positioning or transform a label: each was a paint layer, 240
painted again at every step), a step makes a few dozen DOM changes (741 before), and a step's frame paints a few
dozen layers (284 before)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, launch
from harness.stepper_page import ROOT, packed_run, step_to, stepper_files, stepper_page, traced_steps

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]

# JS: each panel's box as laid out (a row of panels is moved up by a transform, not laid out again), a mark on
# each of its key labels (set once: the same element keeps it), and how each label is placed (its position and
# transform).
BOXES = """() => [...document.querySelectorAll('.lens-panel')].map(p => {
  const box = (e) => [e.offsetLeft, e.offsetTop, e.offsetWidth, e.offsetHeight];  // as laid out (not moved)
  const keys = [...p.querySelectorAll('.lens-k')];
  keys.forEach((k, i) => { if (!k.dataset.mark) k.dataset.mark = String(Math.random()); });
  return {box: box(p), marks: keys.map(k => k.dataset.mark),
          placed: [...new Set(keys.map(k => getComputedStyle(k).position + ' ' + getComputedStyle(k).transform))]};
})"""


@pytest.fixture(scope="module")
def page():
    from playwright.sync_api import sync_playwright

    run = packed_run("grid", "cross_attention")
    with sync_playwright() as p:
        browser = launch(p)
        try:
            yield browser, stepper_page(browser, stepper_files(str(ROOT)), run)
        finally:
            browser.close()


def test_a_step_moves_no_panel_and_keeps_the_key_labels(page):
    _, pg = page
    step_to(pg, 1)
    first = pg.evaluate(BOXES)
    assert len(first) == 12  # everyday-en-fr's cross-attention: 3 layers x 4 heads
    for step in (2, 6, 12):
        step_to(pg, step)
        now = pg.evaluate(BOXES)
        assert [p["box"] for p in now] == [p["box"] for p in first], step  # no panel laid out again
        assert [p["marks"] for p in now] == [p["marks"] for p in first], step  # the same label elements
    # no label placed on its own (absolute positioning or a transform made each one a paint layer)
    assert {x for p in first for x in p["placed"]} == {"static none"}


def test_a_step_changes_a_few_dozen_nodes_and_paints_a_few_dozen_layers(page):
    browser, pg = page
    steps = 8
    got, counts = traced_steps(browser, pg, steps)
    assert got["step"] == steps + 1
    print(json.dumps({"records": got["records"], "paint": counts["paint"], "layout": counts["layout"]}))
    assert max(got["records"]) <= 150, got["records"]  # 741 before: every label restyled, the side rebuilt
    assert counts["paint"] / steps <= 80, counts["painted"]  # 284 before: each of the 240 key labels repainted
