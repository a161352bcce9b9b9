"""Figures drawn by plotly.js in Chromium (no server: each figure as a static HTML page), measured in the page:
the grid's colour bar in the mean view and at step 1 (it collapsed, its tick labels overlapped) and
the Leakage lab's "Per row" chart (its legend overlapped its title)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import plotly.io as pio
import pytest
from attention_lens.app.render import leakage as lf
from attention_lens.app.render import views
from attention_lens.model.engine import DecodeOptions, load_engine

from harness.browser import CHROMIUM, launch
from tests.fixtures.checkpoints import ROOT

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]
BOXES = """(sel) => Array.from(document.querySelectorAll(sel)).map(e => { const r = e.getBoundingClientRect();
    return [r.left, r.top, r.right, r.bottom]; }).filter(b => b[2] > b[0] && b[3] > b[1])"""


def overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from playwright.sync_api import sync_playwright

    folder = tmp_path_factory.mktemp("figs")
    with sync_playwright() as p:
        browser = launch(p)
        tab = browser.new_page(viewport={"width": 1366, "height": 900})

        def show(fig, name: str):
            path = folder / f"{name}.html"
            path.write_text(pio.to_html(fig, include_plotlyjs=True, full_html=True), encoding="utf-8")
            tab.goto(path.as_uri())
            tab.wait_for_selector(".main-svg")
            return tab

        yield show
        browser.close()


@pytest.fixture(scope="module")
def trace():
    engine = load_engine(ROOT / "checkpoints" / "en-fr")
    return engine.trace("the black cat sat on the mat .", options=DecodeOptions())


@pytest.mark.parametrize("view,step", [("mean", 1), ("mean", 4), ("grid", 1), ("mean", 10)])
def test_colour_bar_stands_and_its_labels_stand_apart(page, trace, view, step):
    fig = views.attention_figure(trace, "cross_attention", view, min(step, trace.m))
    tab = page(fig, f"{view}{step}")
    (bar,) = tab.evaluate(BOXES, ".colorbar .cbbg")
    assert bar[3] - bar[1] >= 150, bar  # it was 17-60 px tall
    labels = tab.evaluate(BOXES, ".colorbar .cbaxis text, .colorbar .ycbaxis text, .colorbar g.ytick text")
    assert len(labels) >= 3
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            assert not overlap(a, b), (a, b)
    svg = tab.evaluate("() => document.querySelector('.main-svg').getBoundingClientRect().bottom")
    assert bar[3] <= svg + 1  # the bar is inside the figure, not cut off at its foot


def test_per_row_chart_legend_clears_its_title(page):
    labels = [f"{i} ▁tok{i} → ▁tok{i + 1}" for i in range(9)]
    fig = lf.row_bars(labels, np.linspace(0, 0.9, 9), np.linspace(0.9, 0, 9),
                      title="Per row: the largest over every layer and head")
    fig.update_layout(width=560)  # the width of its column on the page at 1366 px
    tab = page(fig, "rows")
    (title,) = tab.evaluate(BOXES, ".gtitle")
    legend = tab.evaluate(BOXES, ".legend .traces")
    assert len(legend) == 2
    for item in legend:
        assert not overlap(title, item), (title, item)
    (plot,) = tab.evaluate(BOXES, ".cartesianlayer .bg, .bglayer .bg")[:1]
    for item in legend:
        assert not overlap(plot, item)
