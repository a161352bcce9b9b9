"""app/render/echarts.py: the page's ECharts option says what the plotly figure says (cells, mask, row outline,
colour scale, labels, fonts). Pure: no Streamlit, no browser (the browser tests draw it)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_lens.app.render import echarts, figures, views
from attention_lens.model.engine import DecodeOptions

from tests.fixtures.apptest import panels

CAT = "the cat sat ."


@pytest.fixture(scope="module")
def forced(tiny_engine):
    return tiny_engine.trace(CAT, target="le chat s' assit .")


def test_grid_option_holds_every_cell_the_figure_holds(forced):
    step = 3
    fig = views.attention_figure(forced, "decoder_self_attention", "grid", step)
    opt = echarts.option(fig)
    json.dumps(opt)  # what st.echarts_chart sends: plain JSON, no NaN, no numpy
    s = views.at_step(forced, "decoder_self_attention", step)
    L, H = s.weights.shape[:2]
    shown, masked = panels(opt), panels(opt, masked=True)
    assert len(shown) == len(masked) == L * H
    for i, z in enumerate(shown):
        w = s.weights[i // H, i % H]
        assert z.shape == w.shape
        np.testing.assert_allclose(z[s.mask], w[s.mask], atol=5e-4 + 1e-9)  # 3 decimals, as the tooltip reads
        assert np.isnan(z[~s.mask]).all()  # a masked cell is never drawn as a weight
        assert np.array_equal(~np.isnan(masked[i]), ~s.mask)
    glyphs = [x for x in opt["series"] if x["type"] == "heatmap" and "masked" in x["tooltip"]["formatter"]]
    assert all(x["label"]["formatter"] == figures.MASK_GLYPH and x["itemStyle"]["color"] == figures.MASK_COLOR
               for x in glyphs)
    # the step's row outlined in every panel: a closed line around row step-1, on hidden value axes
    outlines = [x for x in opt["series"] if x["type"] == "line"]
    assert len(outlines) == L * H
    assert {tuple(map(tuple, x["data"])) for x in outlines} == {
        ((-0.5, step - 1.5), (s.weights.shape[-1] - 0.5, step - 1.5), (s.weights.shape[-1] - 0.5, step - 0.5),
         (-0.5, step - 0.5), (-0.5, step - 1.5))}
    # labels as the model read them, not HTML-escaped for plotly
    assert opt["xAxis"][0]["data"][0] == "0 <s>" and "&lt;" not in json.dumps(opt)
    titles = [t["text"] for t in opt["title"]]
    assert "layer 1 · head 1" in titles and f"layer {L} · head {H}" in titles
    vm = opt["visualMap"]
    assert vm["min"] == 0 and vm["max"] == 1.0 and vm["seriesIndex"] == [
        i for i, x in enumerate(opt["series"]) if x["type"] == "heatmap" and "masked" not in x["tooltip"]["formatter"]]
    assert vm["inRange"]["color"][0] == "#ffffff" and vm["inRange"]["color"][-1] == "#08306b"
    # what a screen reader hears; the browser tests read "Last query: <row>" to know the step is drawn
    assert f"Last query: {s.q_labels[-1]}" in opt["aria"]["label"]["description"]


def test_head_and_mean_views_and_the_stretched_scale(forced):
    fig = views.attention_figure(forced, "cross_attention", "head", 2, layer=1, head=1, scale="stretch")
    opt = echarts.option(fig)
    assert len(panels(opt)) == 1 and not panels(opt, masked=True)
    assert opt["visualMap"]["max"] == pytest.approx(float(forced.cross_attention[1, 1, :2].max()))
    assert opt["title"][0]["text"].startswith("Cross-attention · layer 2 · head 2")
    assert opt["xAxis"][0]["name"] == "key (attended to)"
    mean = echarts.option(views.attention_figure(forced, "cross_attention", "mean", 4))
    np.testing.assert_allclose(np.stack(panels(mean)), forced.cross_attention[:, :, :4].mean(axis=1), atol=5e-4)


def test_grids_drawn_as_images_stay_plotly(monkeypatch):
    monkeypatch.setattr(figures, "IMAGE_CELLS", 10)
    w = np.full((2, 2, 3, 3), 1 / 3)
    fig = figures.grid(w, figures.labels("abc"), figures.labels("xyz"))
    assert echarts.option(fig) is None


def test_encoder_grid_has_no_outlined_row(tiny_engine):
    greedy = tiny_engine.trace(CAT, options=DecodeOptions(max_len=4))
    opt = echarts.option(views.attention_figure(greedy, "encoder_self_attention", "grid", 1))
    assert not [x for x in opt["series"] if x["type"] == "line"]  # the encoder has no step row to outline
    assert len(panels(opt)) == greedy.encoder_self_attention.shape[0] * greedy.encoder_self_attention.shape[1]


def test_crowded_key_labels_shrink_to_stay_apart():
    w = np.full((1, 3, 2, 16), 1 / 16)
    fig = figures.grid(w, figures.labels("ab"), figures.labels("abcdefghijklmnop"))
    given = fig.layout.xaxis.tickfont.size
    fitted = [a["axisLabel"]["fontSize"] for a in echarts.option(fig)["xAxis"]]
    kept = [a["axisLabel"]["fontSize"] for a in echarts.option(fig, fit_labels=False)["xAxis"]]
    assert all(f < given for f in fitted) and all(f >= 7 for f in fitted) and set(kept) == {given}
    # wider charts (a 1920 screen) let them grow back, never past the figure's own size; presenter mode keeps it
    grown = echarts.option(fig)["media"]
    assert [m["query"]["minWidth"] for m in grown] == list(echarts.WIDER)
    sizes = [[a["axisLabel"]["fontSize"] for a in m["option"]["xAxis"]] for m in grown]
    assert all(f < w <= given for f, w in zip(fitted, sizes[0])) and all(w <= given for w in sizes[-1])
    # presenter mode keeps its font on every width; wider charts may only leave fewer labels out
    kept_media = echarts.option(fig, fit_labels=False).get("media", [])
    assert all(a["axisLabel"]["fontSize"] == given for m in kept_media for a in m["option"]["xAxis"] if a)


def test_small_charts_are_svg_large_ones_canvas_and_the_largest_stay_plotly():
    small = echarts.option(figures.grid(np.full((1, 2, 3, 3), 1 / 3), figures.labels("abc"), figures.labels("xyz")))
    assert echarts.renderer(small) == "svg"
    n = int(np.sqrt(echarts.SVG_CELLS)) + 1
    big = echarts.option(figures.heatmap(np.full((n, n), 1 / n), figures.labels("a" * n), figures.labels("b" * n)))
    assert echarts.renderer(big) == "canvas"
    n = int(np.sqrt(echarts.MAX_CELLS)) + 1
    assert echarts.option(figures.heatmap(np.full((n, n), 1 / n), figures.labels("a" * n),
                                          figures.labels("b" * n))) is None


def test_cells_a_model_wrote_as_inf_or_nan_are_left_blank():
    w = np.full((1, 1, 2, 3), 0.25)
    w[0, 0, 0, 1], w[0, 0, 1, 2] = np.inf, np.nan
    opt = echarts.option(figures.grid(w, figures.labels("ab"), figures.labels("xyz")))
    json.dumps(opt, allow_nan=False)  # what the page sends must be plain JSON
    z = panels(opt)[0]
    assert np.isnan(z[0, 1]) and np.isnan(z[1, 2]) and z[0, 0] == 0.25
