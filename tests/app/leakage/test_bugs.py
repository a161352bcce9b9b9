"""The Leakage lab's "Three more bugs" view under AppTest, on a tiny random checkpoint: each bug's meter and
figure appear, the swapped cross-attention shows its error on unequal lengths and runs on an equal-length cut."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from attention_lens.app.render import stepper as packing
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import LEAKAGE, clear_caches, page_on, pair
from tests.fixtures.apptest import figure as chart

SOURCE, TARGET = "the black cat sat on the mat .", "le chat noir s' assit sur le tapis ."


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("bugs") / "en-fr")


@pytest.fixture
def app(folder, monkeypatch):
    yield page_on(monkeypatch, LEAKAGE, [folder], timeout=120, preset="custom", source=SOURCE, target=TARGET,
                  leak_view="bugs")
    clear_caches()


def metric(at: AppTest, label: str):
    return next(m for m in at.metric if m.label == label)


def test_mask_after_softmax_meter(app):
    assert not app.exception and not app.error
    assert any("after the softmax" in m.value for m in app.markdown)
    smallest = float(metric(app, "Smallest row sum").value.rstrip("%"))
    assert smallest < 100.0
    assert metric(app, "Weight on the future").value == "0.0%"
    bars = chart(app, "leak_bug_rowsums")["data"]
    assert len(bars) == 2 and len(bars[0]["x"]) == 16  # smallest and mean sum, one bar per decoder row


def test_swapped_cross_attention_error_then_equal_length_run(app):
    app.radio(key="leak_bug").set_value("swap_cross").run()
    assert not app.exception
    assert len(app.error) == 1 and "queries are the 13 source positions" in app.error[0].value
    assert "decoder's 16 rows" in app.error[0].value
    spec = chart(app, "leak_bug_swap")
    assert len(spec["data"][0]["y"]) == 13  # source tokens are the rows of the swapped "cross-attention"
    assert metric(app, "Largest weight on later target tokens").value != "0.0%"


def test_unscaled_entropy_drops(app):
    app.radio(key="leak_bug").set_value("unscaled").run()
    assert not app.exception and not app.error
    healthy = float(metric(app, "Mean row entropy, healthy").value.split()[0])
    broken = float(metric(app, "Mean row entropy, no scaling").value.split()[0])
    assert broken < healthy
    chart(app, "leak_bug_entropy")


def test_training_vs_inference_names_the_parting_step(folder, monkeypatch):
    from attention_lens.model.analysis.exposure import side_by_side
    from attention_lens.model.builtin.engine import BuiltinEngine
    from attention_lens.model.engine import DecodeOptions

    engine = BuiltinEngine.load(folder)
    greedy = engine.trace(SOURCE, options=DecodeOptions())
    reference = engine.detokenize([s.id for s in greedy.steps[:4]]) + " le chat ."
    r = side_by_side(engine, SOURCE, reference)
    first = r.first_difference
    at = page_on(monkeypatch, LEAKAGE, [folder], timeout=120, preset="custom", source=SOURCE, target=reference,
                 leak_view="exposure")
    assert not at.exception and not at.error
    assert first >= 4
    assert any(f"The prefixes part at step {first + 1}" in w.value for w in at.warning)
    assert at.select_slider(key="exp_step").value == first + 1  # opens on the parting row
    # the pair stepper: both runs, the step the page opens on, the parting row marked, a line per step
    header, runs = pair(at)
    assert header["step"] == first + 1 and header["m"] == r.shared and header["mark_row"] == first
    assert header["notes"][first]["badge"] == "different"
    assert [n["badge"] for n in header["notes"][:first]] == ["equal"] * first
    layer = engine.n_decoder_layers - 1  # the view opens on the last layer, the mean of its heads
    for (h, w), cross in zip(runs, (r.tf_cross, r.free_cross)):
        assert (h["kind"], h["view"], h["layer"]) == ("cross_attention", "layer_mean", layer)
        drawn = packing.picture(h, w, first + 1)["data"][0]["z"]
        np.testing.assert_allclose(drawn, cross[layer].mean(0)[:first + 1], atol=h["max_error"] + 1e-6)
    at.select_slider(key="exp_step").set_value(first).run()
    assert pair(at)[0]["step"] == first
    chart(at, "exp_probs")
    clear_caches()
