"""`train --data` on typed text, CI-sized: the grouped split, the raw-text card and word counts, `eval --split`
reproducing the card, and `--init-from` continuing a run's log."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest
from attention_lens.model.corpora.grouped_split import sentence_groups, split_by_sentence

from tests.fixtures.checkpoints import ROOT

PAIRS = [(f"I see {n} cats.", f"Je vois {n} chats.") for n in range(40)] + [
    ("Run!", "Cours !"), ("Run!", "Courez !"), ("Go.", "Cours !"), ("Hi.", "Salut !"), ("Hello!", "Salut !")]


def test_pairs_sharing_a_sentence_are_one_group_and_stay_together():
    groups = sentence_groups(PAIRS)
    run = next(g for g in groups if 40 in g)
    assert sorted(run) == [40, 41, 42]  # Run!/Cours, Run!/Courez, Go./Cours: joined through shared sentences
    assert sorted(next(g for g in groups if 43 in g)) == [43, 44]
    for seed in range(5):
        split = split_by_sentence(PAIRS, seed, held_fraction=0.1)
        train = {s.casefold() for s, _ in split["train"]} | {t.casefold() for _, t in split["train"]}
        held = [x.casefold() for name in ("valid", "test") for pair in split[name] for x in pair]
        assert not [x for x in held if x in train]
        assert sum(len(v) for v in split.values()) == len(PAIRS)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "model", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("train_data")
    data = root / "pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in PAIRS * 3), encoding="utf-8")
    out = root / "model"
    run_cli("train", "--data", str(data), "--out", str(out), "--steps", "12", "--eval-every", "6",
            "--d-model", "32", "--vocab-size", "300", "--quiet")
    return data, out


def test_a_data_model_reads_raw_text_and_ships_its_word_counts(trained):
    _, out = trained
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["text"] == "raw" and card["steps"] == 12
    counts = dict(line.split("\t") for line in (out / "source_words.tsv").read_text().splitlines())
    assert int(counts["cats"]) > 0 and "Cats" not in counts  # case-folded words of the training sources


def test_eval_split_test_reproduces_the_card(trained):
    _, out = trained
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    result = json.loads(run_cli("eval", "--model", str(out), "--split", "test", "--json").stdout)
    assert result["n"] == card["test_metrics"]["n"] == card["test_pairs"]
    for key in ("chrf", "bleu", "teacher_forced_accuracy", "teacher_forced_loss"):
        assert result[key] == pytest.approx(card["test_metrics"][key], abs=1e-4), key


@pytest.mark.slow  # trains or measures a model in a fresh process
def test_init_from_continues_the_log_and_keeps_the_vocabulary(trained, tmp_path):
    data, start = trained
    out = tmp_path / "continued"
    run_cli("train", "--data", str(data), "--out", str(out), "--init-from", str(start), "--variant", "no-shift",
            "--steps", "6", "--eval-every", "6", "--quiet")
    card = json.loads((out / "card.json").read_text(encoding="utf-8"))
    assert card["steps"] == 18 and card["init_from"]["steps"] == 12 and card["variant"] == "no-shift"
    # The card's train_config names the dimensions trained, the start's (d_model 32, its vocabularies), not the
    # defaults of the options this run did not give (it said d_model 128, vocab_size 1000).
    start_config = json.loads((start / "config.json").read_text())
    trained_config = {k: card["train_config"][k] for k in start_config if k in card["train_config"]}
    assert trained_config == {k: v for k, v in start_config.items() if k in trained_config}
    assert card["train_config"]["d_model"] == 32 and card["train_config"]["src_vocab_size"] == start_config[
        "src_vocab_size"]
    assert (out / "source.model").read_bytes() == (start / "source.model").read_bytes()
    with open(out / "train_log.csv", newline="") as fh:
        steps = [int(row["step"]) for row in csv.DictReader(fh)]
    assert steps == [6, 12, 18]
