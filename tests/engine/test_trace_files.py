"""A Trace written for strict readers and shared safely: a model with NaN weights gives a JSON trace that a
strict parser accepts (NaN written as null, read back as NaN), NPZ meta too; a Trace's arrays are read-only,
so that a trace cached for every session of a server cannot be changed by one of them."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.trace import Trace
from safetensors.torch import load_file, save_file

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint


def reject(constant: str) -> float:
    raise ValueError(f"{constant} is not JSON")


@pytest.fixture(scope="module")
def nan_engine(tmp_path_factory) -> BuiltinEngine:
    folder = build_tiny_checkpoint(tmp_path_factory.mktemp("nan") / "m")
    tensors = load_file(str(folder / "model.safetensors"))
    tensors["src_embed.weight"] = tensors["src_embed.weight"].clone().fill_(float("nan"))
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    return BuiltinEngine.load(folder)


@pytest.mark.parametrize("target", [None, TARGETS[0]])
def test_a_trace_of_nan_weights_is_strict_json_and_reads_back_as_nan(nan_engine, tmp_path, target):
    trace = nan_engine.trace(SOURCES[0], target=target, options=DecodeOptions(max_len=6))
    assert np.isnan(trace.cross_attention).any()  # the case under test: the model really computed NaN
    path = tmp_path / "t.json"
    trace.save(path)
    data = json.loads(path.read_text(encoding="utf-8"), parse_constant=reject)
    assert data["cross_attention"][0][0][0][0] is None
    back = Trace.load(path)
    np.testing.assert_array_equal(np.isnan(back.cross_attention), np.isnan(trace.cross_attention))
    assert [math.isnan(s.prob) for s in back.steps] == [math.isnan(s.prob) for s in trace.steps]


def test_npz_meta_of_a_nan_trace_is_strict_json(nan_engine, tmp_path):
    trace = nan_engine.trace(SOURCES[1], target=TARGETS[1])
    assert any(math.isnan(s.prob) for s in trace.steps)
    path = tmp_path / "t.npz"
    trace.save(path)
    with np.load(path, allow_pickle=False) as z:
        json.loads(str(z["meta"]), parse_constant=reject)
    assert np.isnan(Trace.load(path).decoder_self_attention).any()


def test_a_finite_trace_is_written_as_before(tiny_engine):
    trace = tiny_engine.trace(SOURCES[2])
    assert trace.to_json() == json.dumps(trace.to_dict(), ensure_ascii=False)


def test_every_array_of_a_trace_is_read_only(tiny_engine):
    trace = tiny_engine.trace(SOURCES[0], target=TARGETS[0], options=DecodeOptions(contributions=True))
    arrays = trace.arrays()
    assert len(arrays) == 3 + 2 * 3 + 1
    for a in arrays:
        assert not a.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            a[(0,) * a.ndim] = 0.5
    with pytest.raises(ValueError, match="read-only"):
        trace.cross_attention += 1
    beam = tiny_engine.trace(SOURCES[1], options=DecodeOptions(mode="beam", beam_size=2))
    assert beam.beams and all(not a.flags.writeable for b in beam.beams for a in b.arrays())
