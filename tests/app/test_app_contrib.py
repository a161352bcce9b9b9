"""Explore's readings beyond raw weights and "switch this head off" (issue 14), under AppTest."""

from __future__ import annotations

import numpy as np

from app.screens.explore_analysis import K_ABLATED
from model.engine import DecodeOptions
from tests.app.test_app import CAT, app, array, figure, heat_shapes, two_models  # noqa: F401  (fixtures)


def weights_of(spec: dict) -> list[np.ndarray]:
    return [array(t["z"]) for t in spec["data"] if t["type"] == "heatmap" and "masked" not in t.get("hovertemplate", "")]


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
        np.testing.assert_allclose(np.stack(shown).reshape(expected.shape), expected, atol=1e-6)
        assert not all(np.allclose(a, b) for a, b in zip(raw, shown))
        assert figure(app, "share")["data"][0]["x"][0] == float(trace.contributions["source_share"][m - 1])
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
    assert app.session_state[K_ABLATED]["tiny-a"] == ("cross:1:1",)
    assert any("cross:1:1" in m.value for m in app.markdown)
    spec = figure(app, "ablation_probs")
    plain = tiny_engine.trace(CAT)
    off = tiny_engine.trace(CAT, options=DecodeOptions(ablate=("cross:1:1",), forced=tuple(s.id for s in plain.steps),
                                                       max_len=plain.m))
    np.testing.assert_allclose(array(spec["data"][0]["y"]), [s.prob for s in plain.steps], rtol=1e-6)
    np.testing.assert_allclose(array(spec["data"][1]["y"]), [s.prob for s in off.steps], rtol=1e-6)
    app.button(key="ablate_undo").click().run()
    assert app.session_state[K_ABLATED]["tiny-a"] == ()
    assert not [c for c in app.get("plotly_chart") if c.proto.id.endswith("-ablation_probs")]
