"""The training code, on a tiny model for a few steps (the shipped models are trained once and committed)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from attention_lens.model.analysis.card_pages import own_test_examples, sample_of_examples
from attention_lens.model.analysis.leakage import CARD_SAMPLE, CARD_SAMPLE_N
from attention_lens.model.builtin.checkpoint import load_checkpoint
from attention_lens.model.corpora import generate
from attention_lens.model.engine import load_engine
from attention_lens.model.training.train import TrainConfig, train

from tests.fixtures.checkpoints import ROOT

TINY = dict(architecture=dict(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64), vocab_size=300,
            eval_every=4, em_sample=8, dtype="float32")


@pytest.fixture(scope="module")
def rows():
    splits = generate("en-fr", n_train=200, n_valid=20, n_test=20, n_combo=4)
    return {name: [(e.source, e.target) for e in examples] for name, examples in splits.items()}


@pytest.mark.slow  # trains or measures a model in a fresh process
def test_train_on_your_own_tsv_writes_a_model_that_opens(rows, tmp_path):
    """`train --data FILE.tsv` names the card after the file and keeps the Broken models' sample of its own test
    split (it used to die after training, looking the file's name up as a built-in pair for that sample, then
    wrote none: `python -m model.analysis.card_pages FOLDER` had to be run after it)."""
    data = tmp_path / "my-pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in rows["train"]), encoding="utf-8")
    out = tmp_path / "mine"
    proc = subprocess.run(
        [sys.executable, "-m", "model", "train", "--data", str(data), "--out", str(out), "--steps", "8",
         "--eval-every", "4", "--d-model", "32", "--heads", "2", "--layers", "1", "--vocab-size", "300", "--quiet"],
        cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert {"config.json", "model.safetensors", "card.json", "train_log.csv"} <= {p.name for p in out.iterdir()}
    card = json.loads((out / "card.json").read_text())
    assert card["steps"] == 8 and card["data"] == str(data) and "test_metrics" in card
    assert "combination_metrics" not in card
    # the Broken models' sample: measured by train itself, on the test split the app measures the model on
    kept = card[CARD_SAMPLE]
    assert kept["n"] == min(CARD_SAMPLE_N, card["test_pairs"]) > 0
    examples = own_test_examples(card, CARD_SAMPLE_N)
    assert kept == sample_of_examples(load_engine(str(out)), examples)
    assert len((out / "train_log.csv").read_text().splitlines()) == 1 + 2  # header, steps 4 and 8
    ckpt = load_checkpoint(out)
    assert ckpt.config.d_model == 32 and ckpt.config.n_encoder_layers == 1


def test_train_leaves_the_thread_count_as_it_found_it(rows, tmp_path):
    """train runs on TrainConfig.threads and sets torch's count back after it, for what runs next in the process
    (a gradient test ran on one thread after an in-process train)."""
    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        train(rows, tmp_path / "m", TrainConfig(steps=4, seed=0, threads=1, **TINY), {"pair": "tiny", "data": "t.tsv"},
              progress=False)
        assert torch.get_num_threads() == 3
    finally:
        torch.set_num_threads(before)


def _weights(folder: Path) -> dict[str, torch.Tensor]:
    return {k: v.float() for k, v in load_checkpoint(folder).model.state_dict().items()}


def test_ema_saves_the_average_not_the_last_weights(rows, tmp_path):
    """With --ema the saved weights are the moving average: a decay near 0 follows the weights (same model as
    without it), a large one stays behind them."""
    runs = {}
    for name, ema in (("plain", 0.0), ("follow", 1e-9), ("average", 0.9)):
        card = train(rows, tmp_path / name, TrainConfig(steps=8, seed=0, ema=ema, warmup=1, lr=1e-2, **TINY),
                     {"pair": "tiny", "data": "tiny.tsv"}, progress=False)
        assert card["train_config"]["ema"] == ema
        runs[name] = _weights(tmp_path / name)
    for key, plain in runs["plain"].items():
        torch.testing.assert_close(runs["follow"][key], plain, atol=1e-5, rtol=1e-4)
    assert max(float((runs["average"][k] - v).abs().max()) for k, v in runs["plain"].items()) > 1e-3


def test_bad_ema_is_refused():
    with pytest.raises(ValueError, match="ema"):
        TrainConfig(ema=1.0)


def test_an_unknown_dimension_is_refused():
    with pytest.raises(ValueError, match="d_modle"):
        TrainConfig(architecture={"d_modle": 64})
