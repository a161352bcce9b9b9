"""`train --init-from M --data FILE`: the start's training sentences are kept out of FILE's valid and test splits
(moved to training, whole sentence groups), read from M's card (its data and split seed, and its own start's); a
start whose pairs cannot be read is said to be unchecked."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from attention_lens.model.corpora.grouped_split import _key, sentence_groups, split_by_sentence, without_seen
from attention_lens.model.training.start_data import hold_out_start

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.checkpoints import ROOT, edit_card

PAIRS = [(f"word{i} sees the cat .", f"mot{i} voit le chat .") for i in range(400)]


def _write(path, rows):
    path.write_text("".join(f"{s}\t{t}\n" for s, t in rows), encoding="utf-8")
    return path


def _keys(rows):
    return {(side, _key(text)) for pair in rows for side, text in enumerate(pair)}


@pytest.fixture
def start(tmp_path):
    """A start 'trained' on the first 200 pairs (its card names that file and seed 0) and the fine-tune's file:
    100 of those pairs and 200 new ones."""
    a = _write(tmp_path / "a.tsv", PAIRS[:200])
    folder = edit_card(build_tiny_checkpoint(tmp_path / "start"), data=str(a), seed=0, pair="a")
    d = _write(tmp_path / "d.tsv", PAIRS[:100] + PAIRS[200:])
    return folder, a, d


def test_no_held_out_sentence_is_one_the_start_trained_on(start):
    folder, a, _ = start
    rows = PAIRS[:100] + PAIRS[200:]
    splits = split_by_sentence(rows, 0)
    seen = split_by_sentence(PAIRS[:200], 0)["train"]
    assert _keys(splits["test"]) & _keys(seen)  # the overlap the fine-tune's card would otherwise hide
    held, info = hold_out_start(splits, str(folder))
    assert info["start_data"] == [f"{a} (seed 0)"] and "unchecked" not in info
    for name in ("valid", "test"):
        assert held[name] and not _keys(held[name]) & _keys(seen)
        assert info[f"{name}_moved"] == len(splits[name]) - len(held[name]) > 0
    assert sorted(held["train"] + held["valid"] + held["test"]) == sorted(rows)  # moved, none lost


def test_a_group_sharing_one_sentence_with_the_start_moves_whole():
    rows = [("a .", "x ."), ("a .", "y ."), ("b .", "z ."), ("c .", "w ."), ("d .", "v .")]
    splits = {"train": [rows[3]], "valid": [rows[4]], "test": [rows[0], rows[1], rows[2]]}
    assert len(sentence_groups(splits["test"])) == 2
    held, moved = without_seen(splits, [("A .", "other .")])  # "a ." in any case and spacing
    assert held["test"] == [rows[2]] and moved == {"valid": 0, "test": 2}
    assert rows[0] in held["train"] and rows[1] in held["train"]
    with pytest.raises(ValueError, match="every test pair shares a sentence"):
        without_seen(splits, [("a .", "x ."), ("b .", "z .")])


def test_a_start_whose_pairs_cannot_be_read_is_said_to_be_unchecked(tmp_path):
    generated = build_tiny_checkpoint(tmp_path / "generated")  # its card: the generated en-fr corpus
    splits = split_by_sentence(PAIRS, 0)
    held, info = hold_out_start(splits, str(generated))
    assert held == splits and "generated en-fr corpus" in info["unchecked"][0]
    gone = edit_card(build_tiny_checkpoint(tmp_path / "gone"), data=str(tmp_path / "missing.tsv"), seed=0)
    assert "missing.tsv is not here" in hold_out_start(splits, str(gone))[1]["unchecked"][0]


def test_the_starts_own_start_is_followed(start, tmp_path):
    folder, a, _ = start
    later = edit_card(build_tiny_checkpoint(tmp_path / "later"), data=str(_write(tmp_path / "b.tsv", PAIRS[300:])),
                      seed=1, init_from={"path": str(folder)})
    _, info = hold_out_start(split_by_sentence(PAIRS, 0), str(later))
    assert info["start_data"] == [f"{tmp_path / 'b.tsv'} (seed 1)", f"{a} (seed 0)"]


@pytest.mark.slow
def test_train_init_from_says_what_it_held_out_and_the_card_records_it(start, tmp_path):
    folder, _, d = start
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "model", "train", "--data", str(d), "--init-from", str(folder),
                          "--out", str(out), "--steps", "1", "--batch-size", "4", "--eval-every", "100",
                          "--valid-sample", "1", "--warmup", "1", "--text", "conventions", "--quiet"],
                         cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    card = json.loads((out / "card.json").read_text())
    held = card["held_out_of_start"]
    assert held["test_moved"] > 0 and card["test_pairs"] == len(split_by_sentence(PAIRS[:100] + PAIRS[200:], 0)
                                                                ["test"]) - held["test_moved"]
    assert f"{held['test_moved']} test and {held['valid_moved']} valid pairs shared a sentence" in run.stderr
