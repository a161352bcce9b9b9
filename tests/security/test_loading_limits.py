"""Loading that cannot be turned against the server: a folder whose config.json claims a model far
beyond memory, or disagrees with its weights in any way, is refused before the model is allocated, in plain
words naming the disagreement or the limit. The big cases run in a child process whose peak RSS is measured
(and whose address space is capped, so that a regression fails the test instead of the machine)."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from attention_lens.model.engine import CheckpointError
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.safety import ENV_MAX_MB

from harness.models import hf_tiny
from harness.models.tiny import build_tiny_checkpoint

ROOT = Path(__file__).resolve().parents[2]
# The child's peak RSS is its own memory's high-water mark (VmHWM in /proc/self/status). Not ru_maxrss: on Linux
# exec keeps the larger of the new process's peak and the peak of the memory it replaced, which for a child
# spawned by a pytest process late in the suite is pytest's own RSS (the 1.26 GB once seen here).
CHILD = """
import json, resource, sys, time


def peak_mb():
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


resource.setrlimit(resource.RLIMIT_AS, (8 * 2**30, 8 * 2**30))
import transformers.models.marian.modeling_marian  # libraries imported before the clock starts, as in a
import attention_lens.model.hf.load  # server that has opened a model before
from attention_lens.model.engine import CheckpointError
from attention_lens.model.engine.loader import load_engine
before = peak_mb()
t = time.perf_counter()
try:
    load_engine(sys.argv[1])
    outcome = "loaded"
except CheckpointError as exc:
    outcome = "refused: " + str(exc)
except BaseException as exc:
    outcome = f"crashed: {type(exc).__name__}: {exc}"
print(json.dumps({"seconds": time.perf_counter() - t, "outcome": outcome,
                  "rss_mb": peak_mb(), "rss_before_mb": before}))
"""
# About 100 GB as float32: 6 + 6 layers of d_model 12288, d_ff 49152 (about 25 billion parameters).
HUGE = dict(d_model=12288, d_ff=49152, heads=8, layers=6)


def _edit_config(folder: Path, **changes) -> Path:
    cfg = json.loads((folder / "config.json").read_text())
    cfg.update(changes)
    (folder / "config.json").write_text(json.dumps(cfg))
    return folder


def _load_in_child(folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != ENV_MAX_MB} | {"PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", CHILD, str(folder)], capture_output=True, text=True, timeout=120,
                         env=env, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture
def huge_ours(tmp_path) -> Path:
    h = HUGE
    return _edit_config(build_tiny_checkpoint(tmp_path / "ours"), d_model=h["d_model"], d_ff=h["d_ff"],
                        n_heads=h["heads"], n_encoder_layers=h["layers"], n_decoder_layers=h["layers"])


@pytest.fixture
def huge_marian(tmp_path) -> Path:
    h = HUGE
    return _edit_config(hf_tiny.build_marian(tmp_path / "marian"), d_model=h["d_model"],
                        encoder_ffn_dim=h["d_ff"], decoder_ffn_dim=h["d_ff"], encoder_attention_heads=h["heads"],
                        decoder_attention_heads=h["heads"], encoder_layers=h["layers"], decoder_layers=h["layers"])


@pytest.mark.parametrize("which", ["huge_ours", "huge_marian"])
def test_a_100_gb_config_is_refused_fast_and_small(which, request):
    result = _load_in_child(request.getfixturevalue(which))
    assert result["outcome"].startswith("refused: "), result
    assert "GB as float32" in result["outcome"] and ENV_MAX_MB in result["outcome"], result
    assert result["seconds"] < 2.0, result
    # The process never grows past 1 GB, libraries included.
    assert result["rss_mb"] < 1024, result


def test_a_tiny_safetensors_whose_header_lies_is_refused(tmp_path):
    folder = hf_tiny.build_marian(tmp_path / "m")
    name = "model.encoder.layers.0.fc1.weight"
    header = {name: {"dtype": "F32", "shape": [200_000, 200_000], "data_offsets": [0, 4 * 200_000 ** 2]}}
    raw = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * 64)
    with pytest.raises(CheckpointError, match=f"corrupt or truncated: .*{name}.*the file holds 64 bytes"):
        load_engine(folder)


def test_ours_small_disagreement_names_the_tensor(tmp_path):
    folder = _edit_config(build_tiny_checkpoint(tmp_path / "ours"), d_ff=72)
    pattern = r"weight \S+\.ff\.\S+ has shape \[\d+(, \d+)?\] in the weights file but config\.json implies"
    with pytest.raises(CheckpointError, match=pattern):
        load_engine(folder)


def test_ours_extra_layer_in_config_names_the_missing_tensor(tmp_path):
    folder = _edit_config(build_tiny_checkpoint(tmp_path / "ours"), n_decoder_layers=3)
    with pytest.raises(CheckpointError, match=r"lacks \d+ tensor\(s\) the config implies, e\.g\. decoder\.2\."):
        load_engine(folder)


@pytest.mark.parametrize("change, pattern", [
    ({"encoder_ffn_dim": 72}, r"weight model\.encoder\.layers\.0\.fc[12]\.\S+ has shape"),
    ({"decoder_layers": 1}, r"does not imply, e\.g\. model\.decoder\.layers\.1\."),
])
def test_hf_small_disagreement_names_the_tensor(tmp_path, change, pattern):
    folder = _edit_config(hf_tiny.build_marian(tmp_path / "m"), **change)
    with pytest.raises(CheckpointError, match=pattern):
        load_engine(folder)


@pytest.mark.parametrize("build", [build_tiny_checkpoint, hf_tiny.build_t5])
def test_the_size_limit_is_named_and_can_be_raised(tmp_path, monkeypatch, build):
    folder = build(tmp_path / "m")
    monkeypatch.setenv(ENV_MAX_MB, "0.01")
    with pytest.raises(CheckpointError, match=f"limit is 0 MB \\({ENV_MAX_MB}.*raise it"):
        load_engine(folder)
    monkeypatch.setenv(ENV_MAX_MB, "100")
    assert load_engine(folder).n_heads == 4


# The multilingual models people debug, as float32: NLLB-200-distilled-600M and mBART-large-50 (2.3 GiB each),
# M2M-100 1.2B (4.6 GiB). Their configs' dimensions, built on the meta device (no memory, no weights).
REAL_SIZES = {
    "nllb-200-distilled-600M": dict(d_model=1024, encoder_layers=12, decoder_layers=12, encoder_ffn_dim=4096,
                                    decoder_ffn_dim=4096, encoder_attention_heads=16, decoder_attention_heads=16,
                                    vocab_size=256_206),
    "m2m100_1.2B": dict(d_model=1024, encoder_layers=24, decoder_layers=24, encoder_ffn_dim=8192,
                        decoder_ffn_dim=8192, encoder_attention_heads=16, decoder_attention_heads=16,
                        vocab_size=128_112),
}


@pytest.mark.parametrize("name", sorted(REAL_SIZES))
def test_the_multilingual_models_people_debug_are_under_the_default_size_limit(name, monkeypatch):
    import torch
    from attention_lens.model.engine.safety import check_size, module_shapes
    from transformers import M2M100Config, M2M100ForConditionalGeneration

    monkeypatch.delenv(ENV_MAX_MB, raising=False)
    with torch.device("meta"):
        skeleton = M2M100ForConditionalGeneration(M2M100Config(**REAL_SIZES[name]))
    n_params = module_shapes(skeleton)[2]
    assert n_params > 600_000_000
    check_size(name, n_params, file_bytes=n_params * 4)  # raises CheckpointError when over the limit
