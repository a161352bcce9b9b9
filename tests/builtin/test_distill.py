"""Word-level distillation: the KL term is 0 exactly when student and teacher agree and positive otherwise; a short
fine-tune with a teacher records it on the card; a teacher of other tokenizers is refused in one line."""

import json
import math
import subprocess
import sys

import pytest
import torch
from attention_lens.model.builtin.checkpoint import save_checkpoint
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.training.distill import distillation_loss

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.checkpoints import ROOT


def test_kl_is_zero_for_equal_distributions_and_positive_otherwise():
    torch.manual_seed(0)
    logits = torch.randn(2, 3, 5)
    keep = torch.tensor([[True, True, False], [True, False, False]])
    assert distillation_loss(logits, logits.clone(), keep).item() == pytest.approx(0.0, abs=1e-7)
    assert distillation_loss(logits + 3.0, logits, keep).item() == pytest.approx(0.0, abs=1e-6)  # same softmax
    other = torch.randn(2, 3, 5)
    assert distillation_loss(other, logits, keep).item() > 0
    # by hand, on one kept position: teacher (1/2, 1/2), student (1/4, 3/4)
    t = torch.log(torch.tensor([[[0.5, 0.5]]]))
    s = torch.log(torch.tensor([[[0.25, 0.75]]]))
    expected = 0.5 * math.log(0.5 / 0.25) + 0.5 * math.log(0.5 / 0.75)
    assert distillation_loss(s, t, torch.tensor([[True]])).item() == pytest.approx(expected, rel=1e-5)
    # padded positions do not count, and a batch with none kept gives 0
    assert distillation_loss(other, logits, torch.zeros(2, 3, dtype=torch.bool)).item() == 0.0


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """Two tiny checkpoints of the same tokenizers (seeds 0 and 1) and one of other tokenizers."""
    root = tmp_path_factory.mktemp("distill")
    same, other_weights = build_tiny_checkpoint(root / "a", seed=0), build_tiny_checkpoint(root / "b", seed=1)
    src_tok = train_tokenizer([*SOURCES, *TARGETS] * 4, vocab_size=80)
    tgt_tok = train_tokenizer(TARGETS * 4, vocab_size=50)
    model = Transformer(ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=32,
                                    n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0,
                                    max_positions=64))
    save_checkpoint(root / "c", model, src_tok, tgt_tok, {"pair": "en-fr", "variant": "healthy"})
    return same, other_weights, root / "c"


def train_cli(*args) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "model", "train", *map(str, args), "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


def fine_tune(start, tmp_path, *extra):
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{s}{k * ' '}\t{t}\n" for k, (s, t) in enumerate(zip(SOURCES * 3, TARGETS * 3))),
                    encoding="utf-8")
    return train_cli("--data", data, "--init-from", start, "--out", tmp_path / "out", "--batch-size", "4",
                     "--eval-every", "100", "--valid-sample", "1", "--warmup", "1", "--text", "conventions", *extra)


@pytest.mark.slow  # trains or measures a model in a fresh process
def test_same_weights_give_zero_and_other_weights_a_positive_kl(tiny, tmp_path):
    same, other_weights, _ = tiny
    run = fine_tune(same, tmp_path, "--steps", "1", "--distill-from", same, "--distill-weight", "0.5")
    assert run.returncode == 0, run.stderr
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert card["distillation"]["kl_first_100"] == pytest.approx(0.0, abs=1e-5)  # before the first update
    run = fine_tune(same, tmp_path, "--steps", "3", "--distill-from", other_weights, "--distill-weight", "2")
    assert run.returncode == 0, run.stderr
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    distill = card["distillation"]
    assert (distill["teacher"], distill["weight"]) == (str(other_weights), 2.0)
    assert distill["kl_first_100"] > 0.001 and distill["kl_last_100"] > 0
    assert "cross-entropy + weight x KL" in distill["loss"]
    assert (card["train_config"]["distill_from"], card["train_config"]["distill_weight"]) == (str(other_weights), 2.0)


@pytest.mark.slow  # trains or measures a model in a fresh process
def test_no_teacher_no_card_entry(tiny, tmp_path):
    run = fine_tune(tiny[0], tmp_path, "--steps", "1")
    assert run.returncode == 0, run.stderr
    card = json.loads((tmp_path / "out" / "card.json").read_text())
    assert "distillation" not in card and not any(k.startswith("distill") for k in card["train_config"])


def test_a_teacher_of_other_tokenizers_is_refused_in_one_line(tiny, tmp_path):
    same, _, other_tokenizers = tiny
    run = fine_tune(same, tmp_path, "--steps", "1", "--distill-from", other_tokenizers, "--distill-weight", "1")
    assert run.returncode == 2
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: the distillation teacher {other_tokenizers} has other "
                                                   "tokenizers than the student")
    assert not (tmp_path / "out" / "card.json").exists()
    run = fine_tune(same, tmp_path, "--steps", "1", "--distill-from", same)  # no weight
    assert run.returncode == 2 and "positive distill_weight" in run.stderr.strip().splitlines()[-1]
