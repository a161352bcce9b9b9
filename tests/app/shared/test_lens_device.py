"""LENS_DEVICE / LENS_DTYPE: where the server's models run (app.services.get_engine). An absent device is the
page's one-sentence CheckpointError naming the setting, never a traceback."""

from __future__ import annotations

import pytest
import streamlit as st
import torch
from attention_lens.app import services
from attention_lens.model.engine import CheckpointError


@pytest.fixture(autouse=True)
def fresh_cache():
    st.cache_resource.clear()
    yield
    st.cache_resource.clear()


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a CUDA GPU")
def test_an_absent_device_is_one_sentence_naming_the_setting(monkeypatch):
    monkeypatch.setenv("LENS_DEVICE", "cuda")
    with pytest.raises(CheckpointError, match=r"^LENS_DEVICE / LENS_DTYPE: device 'cuda' asked for") as err:
        services.get_engine("en-fr")
    assert "\n" not in str(err.value)


def test_the_settings_reach_the_engine_and_its_traces(monkeypatch):
    monkeypatch.setenv("LENS_DEVICE", "cpu")
    monkeypatch.setenv("LENS_DTYPE", "bfloat16")
    engine = services.get_engine("en-fr")
    assert engine.device == torch.device("cpu") and engine.dtype == torch.bfloat16
    trace = engine.trace("the cat sat on the mat .")
    assert trace.model["device"] == "cpu" and trace.model["dtype"] == "bfloat16"
    monkeypatch.delenv("LENS_DTYPE")
    monkeypatch.delenv("LENS_DEVICE")
    st.cache_resource.clear()
    assert services.get_engine("en-fr").dtype == torch.float32  # unset: auto, float32
