"""The attention picture sized to its space (app/render/echarts.py). The one-head map takes most of its
column's width and its rows about a cell's width; labels are sized or thinned so that no two overlap; panels'
titles are cut to their panel's width. (tests/browser/test_picture_browser.py
measures the same in Chromium at 1366 x 768 and 1920 x 1080.)"""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.app.render import echarts, figures, views
from attention_lens.model.engine import DecodeOptions

SENTENCE = "the old king found a bank near the river and the black cat sat on the mat while dogs barked"
WORDS = SENTENCE.split(" ")


def sentence(n: int) -> list[str]:
    return [f"▁{WORDS[i % len(WORDS)]}" for i in range(n)]


def head_option(n_q: int, n_k: int) -> dict:
    w = np.full((n_q, n_k), 1 / n_k)
    fig = figures.heatmap(w, figures.row_labels(sentence(n_q), sentence(n_q)), figures.labels(sentence(n_k)),
                          title="Cross-attention · layer 1 · head 1", highlight_row=n_q - 1)
    return echarts.option(fig)


def pct(value: str) -> float:
    return float(value.rstrip("%")) / 100


@pytest.mark.parametrize("n", [5, 15, 30])
def test_one_head_takes_most_of_its_column_and_its_labels_stay_apart(n):
    opt = head_option(n, n + 1)
    grid, = opt["grid"]
    width = echarts.ASSUMED_WIDTH
    assert pct(grid["width"]) >= 0.6
    cell_w, cell_h = pct(grid["width"]) * width / (n + 1), grid["height"] / n
    assert cell_h >= min(24, cell_w) - 1e-9  # rows as tall as the cells are wide, where the sentence allows
    x, y = opt["xAxis"][0]["axisLabel"], opt["yAxis"][0]["axisLabel"]
    if x["rotate"] == 90:  # vertical labels: a label's line height across, every (interval + 1) cells
        assert echarts.LINE * x["fontSize"] <= cell_w * (x["interval"] + 1)
    else:  # flat labels: each fits its cell
        assert x["interval"] == 0 and echarts._text_px([max(opt["xAxis"][0]["data"], key=len)], x["fontSize"]) <= cell_w
    assert echarts.LINE * y["fontSize"] <= cell_h * (y["interval"] + 1)
    assert opt[echarts.HEIGHT_KEY] >= grid["top"] + grid["height"]


def test_a_five_token_head_is_no_postage_stamp():
    opt = head_option(5, 6)
    grid, = opt["grid"]
    assert pct(grid["width"]) * echarts.ASSUMED_WIDTH >= 400 and grid["height"] >= 5 * 48


def test_mean_view_titles_fit_their_panels_and_name_the_layer(tiny_engine):
    trace = tiny_engine.trace(" ".join(WORDS[:12]), options=DecodeOptions(max_len=6))
    opt = echarts.option(views.attention_figure(trace, "cross_attention", "mean", 3))
    names = [t for t in opt["title"] if t["text"].startswith("layer")]
    assert [t["text"] for t in names] == [f"layer {i + 1}" for i in range(tiny_engine.n_decoder_layers)]
    for title, grid in zip(names, opt["grid"]):
        assert title["textStyle"]["overflow"] == "truncate"
        assert title["textStyle"]["width"] <= pct(grid["width"]) * echarts.ASSUMED_WIDTH
    rows = {g["top"] for g in opt["grid"]}
    assert len(rows) == 1 and opt["grid"][0]["height"] >= 3 * echarts.ROW_PX["panels"][0]


def test_a_one_row_step_is_no_thin_strip(tiny_engine):
    trace = tiny_engine.trace(" ".join(WORDS[:6]), options=DecodeOptions(max_len=4))
    for view in ("mean", "head", "grid"):
        opt = echarts.option(views.attention_figure(trace, "cross_attention", view, 1))
        assert all(g["height"] >= echarts.MIN_PANEL_PX for g in opt["grid"]), view
