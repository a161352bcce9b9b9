"""Models of the size people really use. The quick test builds opus-mt's architecture (6 + 6
layers, 8 heads, d_model 512, d_ff 2048) with a small vocabulary and opens and steps it in the app; the slow
ones use the full-size cached models (58k-vocabulary Marian, t5-small-sized T5; built once, minutes). At this size
Explore opens on the mean of the heads (one panel) instead of the 48-panel grid, which stays one click away."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import streamlit as st
from attention_lens.app import registry
from attention_lens.model.engine.loader import load_engine
from streamlit.testing.v1 import AppTest

from harness.models import hf_big

ENTRY = str(Path(__file__).resolve().parents[2] / "app" / "streamlit_app.py")


def open_app(folder: Path, monkeypatch, timeout: int = 300, **query: str) -> AppTest:
    """Explore on the model in `folder` with a custom sentence (no preset's view hint), or with a link's query."""
    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries])
    monkeypatch.setenv("LENS_HF_MODELS", str(folder))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", folder.name)
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(ENTRY, default_timeout=timeout)
    if query:
        at.query_params.update(query)
    else:
        at.session_state["preset"] = "custom"
        at.session_state["source"] = "the cat sat on the mat ."
    return at.run()


def open_and_step(folder: Path, monkeypatch, timeout: int = 300) -> AppTest:
    at = open_app(folder, monkeypatch, timeout)
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


def notices(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_opus_mt_dimensions_open_on_the_mean_view_and_say_why(opus_dims, monkeypatch):
    at = open_and_step(opus_dims, monkeypatch, timeout=60)
    assert at.session_state["view_keep"] == "mean" and at.segmented_control(key="view").value == "mean"
    assert "6 × 8 heads per kind" in notices(at) and "grid of all 48 heads" in notices(at)
    assert not at.error and not any("heads per kind" in w.value for w in at.warning)  # a caption, not an alarm
    at.button(key="next").click().run()
    assert not at.exception and at.session_state["step"] == 3
    assert at.segmented_control(key="view").value == "mean"


def test_opus_mt_dimensions_keep_the_grid_once_chosen(opus_dims, monkeypatch):
    at = open_and_step(opus_dims, monkeypatch, timeout=60)
    at.segmented_control(key="view").set_value("grid").run()
    assert not at.exception and at.session_state["view_keep"] == "grid"
    at.button(key="next").click().run()
    assert not at.exception and at.session_state["step"] == 3
    assert at.segmented_control(key="view").value == "grid" and "heads per kind" not in notices(at)
    at.text_input(key="source").set_value("the dog sat on the mat .").run()  # a new sentence, same model
    assert not at.exception and at.session_state["view_keep"] == "grid"


def test_opus_mt_dimensions_a_link_naming_the_grid_opens_on_it(opus_dims, monkeypatch):
    at = open_app(opus_dims, monkeypatch, timeout=60, text="the cat sat on the mat .", view="grid")
    assert not at.exception and at.session_state["view_keep"] == "grid"
    assert "heads per kind" not in notices(at)


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


@pytest.fixture(scope="module")
def nllb_shape(tmp_path_factory) -> Path:
    """NLLB-200-distilled-600M's shape (12 + 12 layers x 16 heads, its tokenizer) at a small width and vocabulary:
    what the page offers for 192 heads per kind, without the 2.5 GB of the real dimensions."""
    return hf_big.build_nllb_sized(tmp_path_factory.mktemp("nllb_shape") / "nllb-shape", d_model=64, ffn=128,
                                   vocab=320, positions=128)


def test_a_12_by_16_model_opens_on_the_mean_view_with_every_head_one_pick_away(nllb_shape, monkeypatch):
    engine = load_engine(nllb_shape)
    assert (engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads) == (12, 12, 16)
    assert engine.languages() and engine.tgt_lang == "fra_Latn"
    at = open_and_step(nllb_shape, monkeypatch, timeout=120)
    assert at.session_state["view_keep"] == "mean" and "12 × 16 heads per kind" in notices(at)
    at.segmented_control(key="view").set_value("head").run()  # one head: a layer and a head picker
    assert not at.exception
    layer, head = at.selectbox(key="layer"), at.selectbox(key="head")
    assert len(layer.options) == 12 and len(head.options) == 16
    layer.set_value(11).run()
    at.selectbox(key="head").set_value(15).run()
    assert not at.exception and (at.session_state["layer"], at.session_state["head"]) == (11, 15)
