"""Fixtures of tests/hf: `hf_engine`, a Hugging Face engine of each tiny encoder-decoder family that
harness/models/hf_tiny builds (Marian, T5, BART; random weights, no download), built once per module and family."""

from __future__ import annotations

import pytest
from attention_lens.model.hf.engine import HFEngine

from harness.models import hf_tiny


@pytest.fixture(scope="module", params=list(hf_tiny.SEQ2SEQ))
def hf_engine(request, tmp_path_factory) -> HFEngine:
    return HFEngine.load(hf_tiny.SEQ2SEQ[request.param](tmp_path_factory.mktemp(request.param) / "m"))
