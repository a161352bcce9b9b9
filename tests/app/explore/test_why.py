"""Explore's "why this token" panel under AppTest: off by default; the logit lens table and the
gradient saliency row show the cached run's own lens and saliency objects at the step."""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.app import state
from attention_lens.app.render import why
from attention_lens.app.screens.explore import why as explore_why
from attention_lens.app.screens.explore.why import K_LENS, K_SALIENCY
from attention_lens.model.engine import DecodeOptions
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import CAT, array, explore_on, figure


@pytest.fixture
def app(tiny_ckpt, monkeypatch) -> AppTest:
    """Explore on the tiny checkpoint (the tiny_engine fixture's), with CAT typed in."""
    return explore_on(monkeypatch, [tiny_ckpt], tiny_ckpt.name, timeout=90)


def test_lens_and_saliency_at_the_step(app, tiny_engine):
    assert not app.exception
    assert not [c for c in app.get("plotly_chart") if c.proto.id.endswith("-why_saliency_row")]  # off by default
    trace = tiny_engine.trace(CAT, options=DecodeOptions(lens=True, saliency=True))
    step = 2
    app.slider(key="step").set_value(step).run()
    app.toggle(key=K_LENS).set_value(True).run()
    app.toggle(key=K_SALIENCY).set_value(True).run()
    assert not app.exception
    chosen = trace.steps[step - 1].token
    lens = next(h.proto.body for h in app.get("html") if "lens-at-step" in h.proto.body)
    assert why.lens_html(trace.lens, step - 1, chosen, escape=state.text) in lens
    for t in range(trace.m):  # every step's table, each in the block the stepper shows at that step
        assert f"data-step='{t + 1}'>{explore_why.lens_block(trace, t)}</div>" in lens
    row = figure(app, "why_saliency_row")["data"][0]
    expected = trace.saliency["steps"][step - 1]
    np.testing.assert_allclose(array(row["z"])[0], expected["source"] + expected["prefix"], rtol=1e-6)
    grid = array(figure(app, "why_agreement")["data"][0]["z"])
    rho = np.array([[np.nan if v is None else v for v in layer] for layer in expected["spearman"]], dtype=float)
    np.testing.assert_allclose(grid, rho, rtol=1e-6)


def test_saliency_csv_export(tiny_engine):
    from attention_lens.app import exports

    trace = tiny_engine.trace(CAT, options=DecodeOptions(saliency=True, max_len=3))
    frame = exports.saliency_frame(trace)
    assert list(frame.columns) == exports.SALIENCY_COLUMNS
    assert len(frame) == sum(trace.n + len(r["prefix"]) for r in trace.saliency["steps"])
    second = frame[(frame.step == 2) & (frame.side == "source")]
    assert second.token.tolist() == list(trace.source_tokens)
    assert second.integrated_gradients.tolist() == trace.saliency["steps"][1]["source"]
    with pytest.raises(ValueError, match="no saliency"):
        exports.saliency_frame(tiny_engine.trace(CAT, options=DecodeOptions(max_len=3)))
