"""Where a model runs: `--device` / `--dtype` / `load_engine(device=, dtype=)` (model.engine.device). The Trace's
`model` records the device and the float type; a device that is asked for and absent is one `error:` line and exit
code 2 (on a machine without a GPU, `--device cuda` is exactly that); a lower float type still gives float32 CPU
arrays whose rows sum to 1."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.device import DeviceError, device_name, resolve_device, resolve_dtype
from attention_lens.model.engine.loader import load_engine

from tests.fixtures.checkpoints import ROOT

NO_CUDA = not torch.cuda.is_available()
SOURCE = "the cat sat on the mat ."


def test_auto_is_the_gpu_when_there_is_one_else_the_cpu():
    expected = "cuda" if torch.cuda.is_available() else ("mps" if torch.backends.mps.is_available() else "cpu")
    assert resolve_device("auto").type == expected
    assert resolve_device(None).type == expected
    assert resolve_device("cpu") == torch.device("cpu")


@pytest.mark.skipif(not NO_CUDA, reason="this machine has a CUDA GPU")
def test_an_absent_device_is_a_device_error():
    for name in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(DeviceError, match="cuda"):
            resolve_device(name)
    with pytest.raises(DeviceError, match="not one of"):
        resolve_device("tpu")
    with pytest.raises(DeviceError, match="cuda:N"):
        resolve_device("cuda:x")
    with pytest.raises(DeviceError, match="not one of"):
        resolve_dtype("int8")
    assert resolve_dtype("bf16") == torch.bfloat16 and resolve_dtype(None) == torch.float32


@pytest.mark.skipif(not NO_CUDA, reason="this machine has a CUDA GPU")
@pytest.mark.parametrize("command", [
    ["trace", "--text", SOURCE, "--out", "{tmp}/t.json"],
    ["probe", "--text", SOURCE],
    ["eval", "--data", "{tmp}/pairs.tsv"],
    ["align", "--data", "{tmp}/pairs.tsv"],
    ["heads", "--data", "{tmp}/pairs.tsv"],
])
def test_cli_device_cuda_without_a_gpu_is_one_error_line(tmp_path, tiny_ckpt, command):
    (tmp_path / "pairs.tsv").write_text("the cat sat .\tle chat s' assit .\n")
    argv = [a.replace("{tmp}", str(tmp_path)) for a in command]
    out = subprocess.run([sys.executable, "-m", "model", argv[0], "--model", str(tiny_ckpt), "--device", "cuda",
                          *argv[1:]], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 2, out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: device 'cuda'"), out.stderr
    assert "Traceback" not in out.stderr


def test_trace_records_device_and_dtype(tiny_ckpt):
    engine = load_engine(tiny_ckpt, device="auto")
    trace = engine.trace(SOURCE)
    assert trace.model["device"] == device_name(resolve_device("auto"))
    assert trace.model["dtype"] == "float32"
    again = type(trace).from_dict(json.loads(trace.to_json()))
    assert again.model["device"] == trace.model["device"] and again.model["dtype"] == "float32"


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_a_lower_float_type_gives_float32_arrays_close_to_float32(tiny_ckpt, dtype):
    """Measured on the shipped models by benchmarks/dtype_attention.py; here: the tiny model's teacher-forced
    attention in bfloat16 / float16 stays within 0.1 of float32's, and every row still sums to 1."""
    base = load_engine(tiny_ckpt, device="cpu")
    low = load_engine(tiny_ckpt, device="cpu", dtype=dtype)
    assert low.dtype == getattr(torch, dtype) and base.dtype == torch.float32
    target = "le chat s' assit sur le tapis ."
    ref, got = base.trace(SOURCE, target=target), low.trace(SOURCE, target=target)
    assert got.model["dtype"] == dtype
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        a = getattr(got, kind)
        assert a.dtype == np.float32
        np.testing.assert_allclose(a.sum(-1), 1.0, atol=2e-2)
        assert float(np.abs(a - getattr(ref, kind)).max()) < 0.1
    free = low.trace(SOURCE, options=DecodeOptions(max_len=8))
    assert free.m >= 1 and free.model["dtype"] == dtype
    beam = low.trace(SOURCE, options=DecodeOptions(mode="beam", beam_size=2, max_len=6))
    assert len(beam.beams) == 2
