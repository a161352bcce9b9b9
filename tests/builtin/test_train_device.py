"""Training on a device: token-measured batches, mixed precision only on a GPU, a one-line error for an absent
GPU, the gpu-minutes preset sized for what a device call brings back, and the prepared GPU script rehearsed on
the CPU (benchmarks/gpu_train_everyday.py, joined by benchmarks/gpu_join.sh)."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
import torch
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.cli import main as cli_main
from attention_lens.model.cli.train import PRESETS
from attention_lens.model.training.train import autocast_dtype, token_buckets

from benchmarks import gpu_train_everyday as script
from tests.fixtures.checkpoints import ROOT


def test_token_batches_are_bounded_and_cover_the_epoch():
    rng = random.Random(0)
    src = [rng.randint(3, 40) for _ in range(500)]
    tgt = [rng.randint(3, 40) for _ in range(500)]
    batches = token_buckets(src, tgt, 400, random.Random(1))
    assert sorted(i for b in batches for i in b) == list(range(500))
    for b in batches:
        assert len(b) == 1 or (max(src[i] for i in b) + max(tgt[i] for i in b)) * len(b) <= 400


def test_mixed_precision_only_on_a_gpu():
    assert autocast_dtype("auto", torch.device("cpu")) is None
    assert autocast_dtype("fp16", torch.device("cpu")) is None


@pytest.mark.skipif(torch.cuda.is_available(), reason="a GPU is here")
def test_absent_gpu_is_one_line(tmp_path, capsys):
    data = tmp_path / "d.tsv"
    data.write_text("".join(f"word{i} .\tmot{i} .\n" for i in range(40)))
    assert cli_main(["train", "--data", str(data), "--device", "cuda", "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cuda" in err and not (tmp_path / "m" / "model.safetensors").exists()


def test_gpu_preset_fits_what_a_device_call_brings_back():
    """4 + 4 layers x 8 heads (at most 6 x 8 a stack), and both models in float16 well under 64 MiB in all."""
    p = PRESETS["gpu-minutes"]
    assert p["layers"] <= 6 and p["heads"] <= 8
    cfg = ModelConfig(src_vocab_size=p["vocab_size"], tgt_vocab_size=p["vocab_size"], d_model=p["d_model"],
                      n_heads=p["heads"], n_encoder_layers=p["layers"], n_decoder_layers=p["layers"],
                      d_ff=p["d_ff"])
    with torch.device("meta"):
        n = sum(t.numel() for t in Transformer(cfg).parameters())
    per_model = 2 * n + 2 * 1024 * 1024  # float16 weights, tokenizers and word counts
    assert 2 * per_model <= 62 * 1024 * 1024


@pytest.mark.slow
def test_the_gpu_script_rehearsed_on_the_cpu(tmp_path, monkeypatch):
    monkeypatch.setattr(script, "PIECE", 400 * 1024)  # small pieces, so that the join meets two per model
    out = tmp_path / "out"
    assert script.main(["--out", str(out), "--preset", "cpu-rehearsal", "--device", "cpu", "--lines", "800",
                        "--work", str(tmp_path / "work")]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert set(summary) == {"en-fr", "de-en"}
    pieces = sorted(p.name for p in out.iterdir() if ".tar." in p.name)
    assert any(name.endswith(".tar.1") for name in pieces)
    subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_join.sh"), str(out), str(tmp_path / "joined")],
                   check=True)
    for pair, s in summary.items():
        folder = tmp_path / "joined" / f"everyday-{pair}"
        card = json.loads((folder / "card.json").read_text())
        assert card["device"] == s["device"] == "cpu" and card["precision"] == "float32"
        assert card["steps"] == 30 and card["train_tokens"] > 0 and card["data"].endswith(f"{pair}.head800.tsv")
        assert s["eval_test"]["n"] == card["test_pairs"] == card["test_metrics"]["n"]
        assert s["eval_test"]["chrf"] == pytest.approx(card["test_metrics"]["chrf"], abs=1e-3)
        engine = BuiltinEngine.load(folder)
        assert engine.n_heads == 8 and engine.n_encoder_layers == 2
        header = (folder / "model.safetensors").read_bytes()[:4000]
        assert b"F16" in header


def test_a_flag_given_beside_a_preset_wins_even_at_its_default():
    from attention_lens.model.cli import build_parser
    from attention_lens.model.cli.train import apply_preset

    args = build_parser().parse_args(["train", "--data", "x.tsv", "--out", "m", "--preset", "gpu-minutes",
                                      "--device", "cpu", "--steps", "6000"])
    apply_preset(args)
    assert (args.device, args.steps, args.layers, args.batch_tokens) == ("cpu", 6000, 4, 12000)
    plain = build_parser().parse_args(["train", "--data", "x.tsv", "--out", "m"])
    apply_preset(plain)
    assert (plain.device, plain.steps, plain.layers, plain.batch_tokens) == ("cpu", 6000, None, 0)
