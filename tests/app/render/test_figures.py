"""Figure builders and step views: shapes, labels, masks, colour scale. Pure: no Streamlit, no server."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from attention_lens.app.render import bars, figures, views
from attention_lens.model.engine import DecodeOptions

APP = Path(__file__).resolve().parents[3] / "app"


CAT = "the cat sat ."


def weight_traces(fig):
    return [t for t in fig.data if t.type == "heatmap" and "masked" not in (t.hovertemplate or "")]


def mask_traces(fig):
    return [t for t in fig.data if t.type == "heatmap" and "masked" in (t.hovertemplate or "")]


def test_labels_are_unique_and_literal():
    lab = figures.labels(["<s>", "▁le", "▁le", "a&b"])
    assert len(set(lab)) == 4
    assert lab[0] == "0 &lt;s&gt;" and lab[1] == "1 ▁le" and lab[3] == "3 a&amp;b"
    rows = figures.row_labels(["<s>", "▁le"], ["▁le", "▁chat"])
    assert rows == ["0 &lt;s&gt; → ▁le", "1 ▁le → ▁chat"]


def test_heatmap_checks_shapes_against_labels():
    with pytest.raises(ValueError, match="query labels"):
        figures.heatmap(np.zeros((2, 3)), ["a", "b", "c"], ["x", "y", "z"])
    with pytest.raises(ValueError, match="mask shape"):
        figures.heatmap(np.zeros((2, 2)), ["a", "b"], ["x", "y"], mask=np.ones((3, 3), bool))


def test_heatmap_draws_masked_cells_apart_from_zero_weight():
    w = np.array([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.2, 0.0, 0.8]])  # row 2 gives key 1 zero weight
    mask = np.tril(np.ones((3, 3), bool))
    fig = figures.heatmap(w, ["a", "b", "c"], ["a", "b", "c"], mask=mask)
    (main,), (over,) = weight_traces(fig), mask_traces(fig)
    z = np.asarray(main.z, dtype=float)
    assert np.isnan(z[0, 1]) and np.isnan(z[1, 2])  # masked: no weight drawn
    assert z[2, 1] == 0.0  # allowed but zero: drawn as a (white) weight
    blocked = np.asarray(over.z, dtype=float)
    assert np.array_equal(~np.isnan(blocked), ~mask)
    assert main.zmin == 0.0 and main.zmax == 1.0
    assert "weight" in main.hovertemplate and "query" in main.hovertemplate and "key" in main.hovertemplate


def test_no_overlay_without_masked_cells():
    fig = figures.heatmap(np.full((2, 2), 0.5), ["a", "b"], ["x", "y"], mask=np.ones((2, 2), bool))
    assert not mask_traces(fig)


def test_grid_has_one_panel_per_layer_and_head():
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(5), size=(3, 4, 4))  # (L=3, h=4, q=4, k=5)
    fig = figures.grid(w, figures.labels("abcd"), figures.labels("vwxyz"))
    traces = weight_traces(fig)
    assert len(traces) == 12
    assert all(np.asarray(t.z).shape == (4, 5) for t in traces)
    assert fig.layout.coloraxis.cmin == 0.0 and fig.layout.coloraxis.cmax == 1.0
    assert [a.text for a in fig.layout.annotations][:2] == ["layer 1 · head 1", "layer 1 · head 2"]
    with pytest.raises(ValueError, match="layers, heads"):
        figures.grid(w[0], figures.labels("abcd"), figures.labels("vwxyz"))


@pytest.fixture(scope="module")
def greedy(tiny_engine):
    return tiny_engine.trace(CAT, options=DecodeOptions(max_len=6))


@pytest.fixture(scope="module")
def forced(tiny_engine):
    return tiny_engine.trace(CAT, target="le chat s' assit .")


def test_step_views_have_the_right_shapes(greedy):
    n, m = greedy.n, greedy.m
    assert m >= 3
    for step in (1, 3, m):
        enc = views.at_step(greedy, "encoder_self_attention", step)
        dec = views.at_step(greedy, "decoder_self_attention", step)
        cross = views.at_step(greedy, "cross_attention", step)
        assert enc.weights.shape[2:] == (n, n) and enc.mask is None
        assert dec.weights.shape[2:] == (step, step)
        assert cross.weights.shape[2:] == (step, n)
        # What the page shows at step t is what the model computed at step t.
        assert np.array_equal(cross.weights, greedy.cross_attention[:, :, :step])
        assert np.array_equal(dec.weights, greedy.decoder_self_attention[:, :, :step, :step])
    assert len(views.at_step(greedy, "decoder_self_attention", 3).q_labels) == 3
    with pytest.raises(ValueError):
        views.at_step(greedy, "cross_attention", m + 1)


def test_decoder_rows_say_what_they_read_and_predicted(greedy):
    s = views.at_step(greedy, "decoder_self_attention", 2)
    read, out = greedy.decoder_input_tokens, greedy.target_tokens
    assert s.q_labels[1] == f"1 {figures.escape(read[1])} → {figures.escape(out[1])}"
    assert read[1] == out[0]  # the shift: row 1 read what row 0 chose


def test_teacher_forcing_shows_the_masked_future(forced):
    s = views.at_step(forced, "decoder_self_attention", 2)
    assert s.weights.shape[2:] == (2, forced.m)
    assert s.mask is not None and np.array_equal(s.mask, np.tril(np.ones((2, forced.m), bool)))
    fig = views.attention_figure(forced, "decoder_self_attention", "grid", 2)
    assert len(mask_traces(fig)) == len(weight_traces(fig)) == 2 * 4


@pytest.mark.parametrize("view,count", [("grid", 8), ("layer", 4), ("head", 1), ("mean", 2)])
def test_attention_figure_views(greedy, view, count):
    fig = views.attention_figure(greedy, "cross_attention", view, 3, layer=1, head=2)
    traces = weight_traces(fig)
    assert len(traces) == count
    assert all(np.asarray(t.z).shape == (3, greedy.n) for t in traces)
    if view == "head":
        assert np.allclose(np.asarray(traces[0].z), greedy.cross_attention[1, 2, :3])
    if view == "layer":  # layer 2's heads in order
        for j, t in enumerate(traces):
            assert np.allclose(np.asarray(t.z), greedy.cross_attention[1, j, :3])
    if view == "mean":
        assert np.allclose(np.asarray(traces[0].z), greedy.cross_attention[0, :, :3].mean(0))


def test_the_stepper_draws_one_layers_heads_in_the_layer_view(greedy):
    from attention_lens.app.render import stepper

    extra = {"kind": "cross_attention", "view": "layer", "layer": 1, "head": 0}
    header, arrays = stepper.unpack(stepper.pack(greedy, extra=extra))
    spec = stepper.picture(header, arrays, 3)
    panels = [d for d in spec["data"] if d["hovertemplate"] == "weight"]
    assert [(d["layer"], d["heads"]) for d in panels] == [(1, [j]) for j in range(4)]
    for j, d in enumerate(panels):
        assert np.allclose(d["z"], greedy.cross_attention[1, j, :3], atol=5e-4)


def test_stretched_colour_scale(greedy):
    fig = views.attention_figure(greedy, "cross_attention", "head", 2, scale="stretch")
    top = float(greedy.cross_attention[0, 0, :2].max())
    assert weight_traces(fig)[0].zmax == pytest.approx(top)


def test_large_grid_is_drawn_as_images_in_the_same_colours(monkeypatch):
    """Above IMAGE_CELLS a grid sends one indexed PNG per panel (a 512-token source on 6 x 8 heads would be
    ~130 MB of heatmap JSON); each pixel is one cell, weights quantised to 255 levels, masked cells apart."""
    import base64
    import io

    from PIL import Image

    monkeypatch.setattr(figures, "IMAGE_CELLS", 100)
    rng = np.random.default_rng(0)
    w = rng.dirichlet(np.ones(6), size=(2, 3, 6))  # (L=2, h=3, q=6, k=6)
    mask = np.tril(np.ones((6, 6), bool))
    w = np.where(mask, w, 0.0)
    fig = figures.grid(w, figures.labels("abcdef"), figures.labels("abcdef"), mask=mask, highlight_row=2)
    images = [t for t in fig.data if t.type == "image"]
    assert len(images) == 6 and not weight_traces(fig)[1:]  # only the colour-bar holder is a heatmap
    png = Image.open(io.BytesIO(base64.b64decode(images[4].source.split(",", 1)[1])))
    idx = np.asarray(png)
    assert idx.shape == (6, 6)
    assert np.array_equal(idx[mask], np.rint(w[1, 1][mask] * 254).astype(np.uint8))
    assert (idx[~mask] == 255).all()
    assert fig.layout.yaxis.range == (5.5, -0.5)  # queries top to bottom, as in the heatmaps
    assert len(fig.layout.shapes) == 6  # the step's row is still outlined in every panel


def _built_unvalidated():
    """Every builder that skips plotly's validation (figures.figure), in each of its shapes."""
    rng = np.random.default_rng(1)
    w = rng.dirichlet(np.ones(5), size=(2, 3, 4))  # (L=2, h=3, q=4, k=5)
    q, k = figures.labels("abcd"), figures.labels(["<s>", "x", "y", "z", "w"])
    mask = np.tril(np.ones((4, 5), bool))
    yield figures.grid(w, q, k, highlight_row=1)
    yield figures.grid(w, q, k, mask=mask, zmax=0.5, title="masked")
    yield figures.heatmap(w[0, 0], q, k, mask=mask, title="one head", highlight_row=2)
    yield figures.heatmap(w[1, 2], q, k)


def test_unvalidated_figures_are_what_plotly_validation_makes_of_them(monkeypatch):
    """The builders skip plotly's per-property validation for speed: here plotly validates each once, so a
    misspelt or out-of-range property fails, and the spec sent to the page must equal the validated one."""
    import json

    import plotly.graph_objects as go
    import plotly.io as pio

    figs = list(_built_unvalidated())
    monkeypatch.setattr(figures, "IMAGE_CELLS", 10)
    figs.append(figures.grid(np.full((1, 2, 3, 3), 1 / 3), figures.labels("abc"), figures.labels("abc"),
                             highlight_row=0))
    for fig in figs:
        spec = fig.to_dict()
        assert json.loads(pio.to_json(go.Figure(spec), validate=False)) == json.loads(pio.to_json(spec, validate=False))
    bad = figures.figure([{"type": "heatmap", "z": [[1.0]], "colourscale": "Blues"}], {})
    with pytest.raises(ValueError, match="colourscale"):
        go.Figure(bad.to_dict())


def test_a_share_too_small_to_show_says_so():
    assert [bars.share(p) for p in (0.0, 0.0001, 0.0006, 0.933)] == ["0.0%", "&lt;0.1%", "0.1%", "93.3%"]


def test_head_aer_table_colours_low_aer_dark_and_marks_unscored_heads():
    from attention_lens.app.render import alignment as af

    out = af.head_aer_html(np.array([[0.05, 0.9, np.nan], [0.5, 0.0, 1.0]]), title="AER per head · argmax")
    cells = out.split("<td ")[1:]
    assert len(cells) == 6 and out.count("<th class='row'>") == 2 and "head 3</th>" in out
    assert "class='none'" in cells[2] and "not scored" in cells[2]
    assert "AER 0.050'>0.05<" in cells[0] and "color:#ffffff" in cells[0]  # dark cell, light text
    assert "background:#ffffff" in cells[5] and "color:#1f2933" in cells[5]  # AER 1: white, like zero weight
    assert "background:#08306b" in cells[4]  # AER 0: the scale's darkest colour
    with pytest.raises(ValueError, match="layers, heads"):
        af.head_aer_html(np.zeros(3))


def test_ranking_table_is_escaped_html_with_numbers_right_aligned_and_scrolling():
    import pandas as pd
    from attention_lens.app.render import alignment as af

    table = pd.DataFrame({"matrix": ["layer 1 · head <2>", "mean"], "method": ["argmax-plain-L1H2", "union-plain-mean"],
                          "AER": [0.12345, float("nan")], "precision": [0.5, 0.25], "recall": [1.0, 0.0]})
    out = af.ranking_html(table, height_px=300)
    assert "max-height:300px" in out and "overflow:auto" in out
    assert "layer 1 · head &lt;2&gt;" in out and "<2>" not in out  # text escaped
    assert "<td>0.123</td>" in out and "<td>–</td>" in out and "<td>1.000</td>" in out
    assert ".lens-rank td:nth-child(3)" in out and ".lens-rank td:nth-child(5)" in out  # AER .. recall
    assert ".lens-rank td:nth-child(2)" not in out and out.split("<tbody>")[1].count("<tr>") == 2


def test_scores_are_html_figures_with_tooltips_and_escaped_text():
    from attention_lens.app.render import alignment as af

    out = af.scores_html([("AER", "0.12", "0 is <best>"), ("Recall", "90%", "sure links found")])
    assert out.count("<b>") == 2 and "<span>AER</span><b>0.12</b>" in out and "<b>90%</b>" in out
    assert "title='0 is &lt;best&gt;'" in out and "<best>" not in out
    assert "title='it&#x27;s'" in af.scores_html([("AER", "1", "it's")])  # quotes cannot end the attribute
