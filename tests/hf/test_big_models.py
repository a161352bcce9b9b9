"""Models of the size people really use (issue 17). The quick test builds opus-mt's architecture (6 + 6
layers, 8 heads, d_model 512, d_ff 2048) with a small vocabulary and opens and steps it in the app; the slow
ones use the full-size cached models (58k-vocabulary Marian, t5-small-sized T5; built once, minutes)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import registry
from model.engine.loader import load_engine
from tests.fixtures import hf_big

ENTRY = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")


def open_and_step(folder: Path, monkeypatch) -> AppTest:
    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries])
    monkeypatch.setenv("LENS_HF_MODELS", str(folder))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", folder.name)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(ENTRY, default_timeout=300)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = "the cat sat on the mat ."
    at.run()
    assert not at.exception, at.exception
    assert at.session_state["model"] == folder.name
    at.button(key="next").click().run()
    assert not at.exception and at.session_state["step"] == 2
    return at


@pytest.fixture(scope="module")
def opus_dims(tmp_path_factory) -> Path:
    return hf_big.build_marian_sized(tmp_path_factory.mktemp("opus_dims") / "opus-dims", vocab=1000, sentences=3000)


def test_opus_mt_dimensions_open_and_step(opus_dims, monkeypatch):
    engine = load_engine(opus_dims)
    assert (engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads) == (6, 6, 8)
    trace = engine.trace("the cat sat on the mat .")
    assert len(trace.cross_attention) == 6 and len(trace.cross_attention[0]) == 8
    open_and_step(opus_dims, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("name, vocab", [("opus-mt-sized", 58_000), ("t5-small-sized", 32_000)])
def test_full_size_models_open_and_step(name, vocab, monkeypatch):
    if not (hf_big.CACHE / name).is_dir() and not os.environ.get("LENS_BIG_MODELS"):
        pytest.skip(f"{name} is not built (minutes): run benchmarks/big_models.py once, or set LENS_BIG_MODELS=1")
    folder = hf_big.cached(name)
    engine = load_engine(folder)
    assert (engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads) == (6, 6, 8)
    assert engine.card["vocab_size"] >= vocab
    open_and_step(folder, monkeypatch)
