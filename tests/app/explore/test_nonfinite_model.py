"""A Hugging Face folder whose weights hold NaN or inf (what a diverged training run leaves): the stepper's packed
run is valid JSON (bare NaN is not, and the browser refused the whole run), the page says plainly that the model
computes NaN and where it first appears, and the stepper still draws the run."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_lens.app import nonfinite, registry
from attention_lens.app.render import stepper as packing
from attention_lens.model.engine import DecodeOptions, load_engine
from streamlit.testing.v1 import AppTest

from harness.models import hf_tiny
from tests.fixtures.apptest import ENTRY, operator_configuration, stepper

SOURCE = "the cat sat on the mat ."


def strict(text: str):
    """json.loads that refuses NaN / Infinity, as the browser's JSON.parse does."""
    return json.loads(text, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(f"not JSON: {c}")))


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, object]:
    root = tmp_path_factory.mktemp("nonfinite")
    return {
        "ffn": hf_tiny.poison(hf_tiny.build_marian(root / "nan-ffn"), "model.decoder.layers.1.fc1.weight"),
        "enc": hf_tiny.poison(hf_tiny.build_marian(root / "inf-enc"), "model.encoder.layers.0.self_attn.q_proj.weight",
                              float("inf")),
    }


def test_the_packed_run_is_json_and_names_where_nan_starts(folders):
    engine = load_engine(folders["ffn"])
    trace = engine.trace(SOURCE, options=DecodeOptions(mode="greedy"))
    assert not np.isfinite(trace.steps[0].prob)  # the model computes NaN (the output after the last attention)
    blob = packing.pack(trace)
    (size,) = np.frombuffer(blob[4:8], "<u4")
    header = strict(blob[8:8 + int(size)].decode("utf-8"))
    assert header["steps"][0]["prob"] is None
    assert nonfinite.first_nonfinite(trace) == ("probabilities", 0, 1)
    lensed = engine.trace(SOURCE, options=DecodeOptions(mode="greedy", lens=True))
    assert nonfinite.first_nonfinite(lensed) == ("layer output", 2, 1)  # decoder layer 2's feed-forward block
    assert "decoder layer 2's output is NaN from step 1" in nonfinite.explain(lensed)

    inf = load_engine(folders["enc"]).trace(SOURCE, options=DecodeOptions(mode="greedy"))
    assert nonfinite.first_nonfinite(inf) == ("encoder_self_attention", 1, None)
    assert "encoder self-attention, layer 1" in nonfinite.explain(inf)


def test_explore_says_the_model_computes_nan_and_draws_the_run(folders, monkeypatch):
    with operator_configuration(monkeypatch, [registry.operator_entries, registry.huggingface_entries]) as apply:
        apply(LENS_HF_MODELS=str(folders["ffn"]), LENS_DEFAULT_MODEL=str(folders["ffn"]))
        at = AppTest.from_file(ENTRY, default_timeout=120)
        at.session_state["preset"] = "custom"
        at.session_state["source"] = SOURCE
        at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert any("computes NaN" in e and "decoder layer 2's output" in e for e in errors), errors
    header, arrays = stepper(at)  # the run is drawn: its attention, which is all numbers here
    assert header["steps"][0]["prob"] is None
    assert np.isfinite(arrays["cross_attention"][:, :, 0, :]).all()
