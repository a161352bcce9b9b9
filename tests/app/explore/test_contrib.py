"""Explore's readings beyond raw weights and "switch this head off", under AppTest."""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.app.screens.explore.analysis import K_ABLATED
from attention_lens.model.engine import DecodeOptions
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import CAT, array, explore_on, figure, heat_shapes, panels, stepper


@pytest.fixture
def app(tiny_ckpt, monkeypatch) -> AppTest:
    """Explore on the tiny checkpoint (the tiny_engine fixture's), with CAT typed in."""
    return explore_on(monkeypatch, [tiny_ckpt], tiny_ckpt.name)


def weights_of(spec: dict) -> list[np.ndarray]:
    return panels(spec)


def test_reading_switch_shows_the_contribution_arrays_in_every_view(app, tiny_engine):
    trace = tiny_engine.trace(CAT, options=DecodeOptions(contributions=True))
    m = trace.m
    app.slider(key="step").set_value(m).run()
    raw = weights_of(figure(app, "attention"))
    for reading in ("norm_weighted", "rollout"):
        app.segmented_control(key="reading").set_value(reading).run()
        assert not app.exception
        shown = weights_of(figure(app, "attention"))
        expected = trace.contributions[reading]["cross_attention"]  # (L, h, m, n), grid drawn layer by layer
        assert len(shown) == expected.shape[0] * expected.shape[1]
        # the page's chart carries weights to 3 decimals, as its tooltip shows them
        np.testing.assert_allclose(np.stack(shown).reshape(expected.shape), expected, atol=5e-4 + 1e-9)
        assert not all(np.allclose(a, b) for a, b in zip(raw, shown))
        share = stepper(app)[0]["source_share"]  # the stepper shows each step's share of the source
        assert share[m - 1] == pytest.approx(float(trace.contributions["source_share"][m - 1]), abs=1e-4)
        for view in ("head", "mean"):
            app.segmented_control(key="view").set_value(view).run()
            assert not app.exception and heat_shapes(figure(app, "attention"))
        app.segmented_control(key="view").set_value("grid").run()
    app.segmented_control(key="reading").set_value("weights").run()
    assert [a.tolist() for a in weights_of(figure(app, "attention"))] == [a.tolist() for a in raw]
    assert not [c for c in app.get("plotly_chart") if c.proto.id.endswith("-share")]


def test_switch_a_head_off_and_undo(app, tiny_engine):
    app.segmented_control(key="view").set_value("head").run()
    app.button(key="head_off").click().run()
    assert not app.exception
    assert app.session_state[K_ABLATED][tiny_engine.name] == ("cross:1:1",)
    assert any("cross:1:1" in m.value for m in app.markdown)
    spec = figure(app, "ablation_probs")
    plain = tiny_engine.trace(CAT)
    off = tiny_engine.trace(CAT, options=DecodeOptions(ablate=("cross:1:1",), forced=tuple(s.id for s in plain.steps),
                                                       max_len=plain.m))
    np.testing.assert_allclose(array(spec["data"][0]["y"]), [s.prob for s in plain.steps], rtol=1e-6)
    np.testing.assert_allclose(array(spec["data"][1]["y"]), [s.prob for s in off.steps], rtol=1e-6)
    app.button(key="ablate_undo").click().run()
    assert app.session_state[K_ABLATED][tiny_engine.name] == ()
    assert not [c for c in app.get("plotly_chart") if c.proto.id.endswith("-ablation_probs")]


def test_heads_page_ranks_every_head_and_opens_one_on_explore(app, tiny_engine):
    app.switch_page("screens/heads.py").run()
    assert not app.exception
    app.select_slider(key="heads_n").set_value(25).run()
    app.button(key="heads_rank").click().run()
    assert not app.exception
    for code, layers in (("enc", 2), ("dec", 2), ("cross", 2)):
        z = array(figure(app, f"heads_{code}")["data"][0]["z"])
        assert z.shape == (layers, tiny_engine.n_heads)
    app.button(key="open_cross_2_3").click().run()
    assert not app.exception
    assert app.session_state["view_keep"] == "head"
    assert (app.session_state["layer_keep"], app.session_state["head_keep"]) == (1, 2)
    assert app.segmented_control(key="view").value == "head"
    assert "layer 2 · head 3" in figure(app, "attention")["title"][0]["text"]
