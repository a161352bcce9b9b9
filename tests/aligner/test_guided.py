"""Guided alignment: the loss is 0 exactly when the supervised attention equals the normalised links and
positive otherwise; the rows and source words it supervises; a short guided fine-tune writes its card."""

import json
import math
import subprocess
import sys

import pytest
import torch
from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.corpora import read_tsv
from attention_lens.model.corpora.grouped_split import split_by_sentence
from attention_lens.model.training.guided import alignment_loss, guide_batch, join_linked_pairs, sentence_guide

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.checkpoints import ROOT

# Source "ab c" has pieces [▁a, b] [▁c] </s>: word 0 is two pieces. Target "x y" has labels ▁x ▁y </s>.
SRC = ["\u2581a", "b", "\u2581c", "</s>"]
LAB = ["\u2581x", "\u2581y", "</s>"]
LINKS = "0-0 1-0 1-1"  # target word 0 <- source words 0 and 1; target word 1 <- source word 1


def _batch(reading="shift"):
    g = sentence_guide(LINKS, SRC, LAB, 2, 2, reading)
    return g, guide_batch([g], n_pieces=4, m_rows=3)


def test_rows_and_distributions_of_each_reading():
    shift, _ = _batch("shift")
    assert shift.rows == (1, 2)  # label t is the decoder's input at row t + 1
    assert shift.dist == ((0.5, 0.5), (0.0, 1.0))
    assert shift.source_groups == ((0, 1), (2,))
    plain, _ = _batch("plain")
    assert plain.rows == (0, 1)


def _attention(rows):
    return torch.tensor([rows], dtype=torch.float32)


def test_zero_when_the_attention_equals_the_normalised_links():
    _, tensors = _batch()
    # row 0 is not supervised (anything); row 1: word 0 gets 0.3 + 0.2 = 0.5 over its two pieces, word 1 0.5;
    # row 2: all on word 1
    att = _attention([[0.1, 0.1, 0.1, 0.7], [0.3, 0.2, 0.5, 0.0], [0.0, 0.0, 1.0, 0.0]])
    assert alignment_loss(att, *tensors).item() == 0.0


def test_positive_otherwise_and_equal_to_the_kl_divergence():
    _, tensors = _batch()
    # row 1 puts 0.25 on </s>: word masses (0.25, 0.5) against q = (0.5, 0.5): KL = 0.5 ln 2; row 2 exact
    att = _attention([[0.25, 0.25, 0.25, 0.25], [0.2, 0.05, 0.5, 0.25], [0.0, 0.0, 1.0, 0.0]])
    loss = alignment_loss(att, *tensors).item()
    assert loss > 0
    assert loss == pytest.approx(0.5 * math.log(2) / 2, rel=1e-5)  # the mean over the two supervised rows
    uniform = _attention([[1 / 3, 1 / 3, 1 / 3, 0.0]] * 3)
    assert alignment_loss(uniform, *tensors).item() > 0


def test_nothing_to_supervise():
    assert sentence_guide("", SRC, LAB, 2, 2) is None
    assert sentence_guide(LINKS, SRC, LAB, 3, 2) is None  # the pieces make 2 source words, the text 3
    assert sentence_guide("5-0", SRC, LAB, 2, 2) is None  # a link outside the sentence
    assert guide_batch([None, None], 4, 3) is None


@pytest.fixture(scope="module")
def start(tmp_path_factory):
    """The tiny checkpoint each fine-tune starts from (--init-from; read, never written)."""
    return build_tiny_checkpoint(tmp_path_factory.mktemp("guided") / "tiny")


def pairs_file(path, rows, distinct: bool = True):
    """`rows` written as a TSV file; `distinct`: line k's source gets k trailing spaces, so that repeated pairs are
    distinct lines of the file (the split keeps a repeated sentence's pairs together)."""
    path.write_text("".join(f"{s}{k * ' ' if distinct else ''}\t{t}\n" for k, (s, t) in enumerate(rows)),
                    encoding="utf-8")
    return path


def diagonal_links(path, rows):
    """One Pharaoh line per pair: source word i to target word i (the last target word past its end)."""
    path.write_text("".join(" ".join(f"{i}-{min(i, len(t.split()) - 1)}" for i in range(len(s.split()))) + "\n"
                            for s, t in rows), encoding="utf-8")
    return path


def train_cli(*args) -> subprocess.CompletedProcess:
    """`python -m model train ARGS --quiet` in a fresh process."""
    return subprocess.run([sys.executable, "-m", "model", "train", *map(str, args), "--quiet"], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow  # trains in a fresh process
def test_guided_fine_tune_writes_its_card(start, tmp_path):
    rows = [(s, t) for s, t in zip(SOURCES, TARGETS)] * 3
    data = pairs_file(tmp_path / "pairs.tsv", rows)
    links = diagonal_links(tmp_path / "links.txt", rows)
    out = tmp_path / "guided"
    run = train_cli("--data", data, "--init-from", start, "--out", out, "--steps", "3", "--batch-size", "4",
                    "--eval-every", "100", "--valid-sample", "1", "--warmup", "1", "--align-links", links,
                    "--align-layer", "2", "--align-head", "0", "--align-weight", "0.5")
    assert run.returncode == 0, run.stderr
    card = json.loads((out / "card.json").read_text())
    guided = card["guided_alignment"]
    assert (guided["layer"], guided["head"], guided["weight"], guided["reading"]) == (2, 0, 0.5, "shift")
    assert guided["supervised_pairs"] > 0 and guided["loss_first_100"] > 0
    assert card["train_config"]["align_links"] == str(links)
    # a run shorter than 200 steps averages separate ends (3 steps: the first and the last), and says how long it ran
    assert guided["loss_over"] == "the first 1 and the last 1 of 3 steps"
    assert guided["loss_first_100"] != guided["loss_last_100"]
    assert guided["steps"] == 3 and guided["minutes"] >= 0

def test_bad_layer_is_one_line(start, tmp_path):
    data = pairs_file(tmp_path / "pairs.tsv", list(zip(SOURCES * 2, TARGETS * 2)))
    links = tmp_path / "links.txt"
    links.write_text("0-0\n" * 12, encoding="utf-8")
    run = train_cli("--data", data, "--init-from", start, "--out", tmp_path / "o", "--steps", "1", "--align-links",
                    links, "--align-layer", "7")
    assert run.returncode == 2
    assert run.stderr.strip().splitlines()[-1].startswith("error: --align-layer must be a decoder layer 1..2")


@pytest.mark.slow  # trains in a fresh process
def test_extra_pairs_with_their_own_links_join_the_training_split(start, tmp_path):
    rows = [(s, t) for s, t in zip(SOURCES, TARGETS)] * 3
    data = pairs_file(tmp_path / "pairs.tsv", rows)
    links = tmp_path / "links.txt"
    links.write_text("\n" * len(rows), encoding="utf-8")  # nothing of --data supervised: only the extra pairs are
    extra_rows = [(f"{s} {s}", f"{t} {t}") for s, t in zip(SOURCES, TARGETS)]  # pairs --data does not have
    extra = pairs_file(tmp_path / "extra.tsv", extra_rows, distinct=False)
    extra_links = diagonal_links(tmp_path / "extra.links", extra_rows)
    out = tmp_path / "guided"
    cmd = ["--data", data, "--init-from", start, "--out", out, "--steps", "2", "--batch-size", "4", "--eval-every",
           "100", "--valid-sample", "1", "--warmup", "1", "--align-links", links, "--align-extra", extra]
    run = train_cli(*cmd)
    assert run.returncode == 2 and "align_extra needs align_extra_links" in run.stderr.strip().splitlines()[-1]
    run = train_cli(*cmd, "--align-extra-links", extra_links)
    assert run.returncode == 0, run.stderr
    card = json.loads((out / "card.json").read_text())
    guided = card["guided_alignment"]
    assert 0 < guided["supervised_pairs"] <= len(extra_rows)  # the extra pairs are the only ones with links
    assert (guided["extra"], guided["extra_links"], guided["extra_pairs"]) == (str(extra), str(extra_links),
                                                                              len(extra_rows))
    typed = [(e.source, e.target) for e in read_tsv(data)]  # as train --data reads and splits the file
    assert card["train_pairs"] == len(split_by_sentence(typed, 0)["train"]) + len(extra_rows)
    assert card["train_config"]["align_extra"] == str(extra)


@pytest.mark.slow  # trains in a fresh process
def test_extra_pairs_can_train_the_alignment_only(start, tmp_path):
    """--align-extra-alignment-only leaves the extra pairs' translation loss out: a batch made only of extra pairs
    then trains the supervised head alone, and the loss stays finite (an all-ignored cross-entropy would be NaN)."""
    data = pairs_file(tmp_path / "pairs.tsv", list(zip(SOURCES, TARGETS)), distinct=False)
    links = tmp_path / "links.txt"
    links.write_text("\n" * len(SOURCES), encoding="utf-8")
    extra_rows = [(f"{s} {s}", f"{t} {t}") for s, t in zip(SOURCES, TARGETS)] * 20
    extra = pairs_file(tmp_path / "extra.tsv", extra_rows, distinct=False)
    extra_links = diagonal_links(tmp_path / "extra.links", extra_rows)
    out = tmp_path / "guided"
    run = train_cli("--data", data, "--init-from", start, "--out", out, "--steps", "4", "--batch-size", "4",
                    "--eval-every", "2", "--valid-sample", "1", "--warmup", "1", "--align-links", links,
                    "--align-extra", extra, "--align-extra-links", extra_links, "--align-extra-alignment-only")
    assert run.returncode == 0, run.stderr
    card = json.loads((out / "card.json").read_text())
    assert card["guided_alignment"]["extra_translation"] is False
    assert card["train_pairs"] == len(split_by_sentence([(e.source, e.target) for e in read_tsv(data)], 0)["train"])
    words = dict(line.split("\t") for line in (out / "source_words.tsv").read_text().splitlines())
    doubled = f"{SOURCES[0]} {SOURCES[0]}".split()
    assert all(int(words.get(w, 0)) <= sum(s.split().count(w) for s in SOURCES) for w in doubled), words
    log = (out / "train_log.csv").read_text().splitlines()
    losses = [float(row.split(",")[1]) for row in log[-2:]]  # this run's rows: step, train_loss, ...
    assert all(math.isfinite(x) for x in losses) and card["guided_alignment"]["loss_first_100"] > 0


def test_joined_pairs_links_point_to_the_same_words():
    pairs = [("i must go .", "je dois partir .", "0-0 1-1 2-2 3-3"),
             ("that stuff is poison .", "ce truc , ce est de le poison .", "0-0 1-1 2?4 3-7 4-8"),
             ("hi", "salut", "")]
    source, target, links = join_linked_pairs(pairs)
    assert (source, target) == ("i must go . that stuff is poison . hi", "je dois partir . ce truc , ce est de le "
                                                                          "poison . salut")
    src_words, tgt_words = source.split(), target.split()
    joined = parse_pharaoh(links)
    expected_sure, expected_possible = set(), set()
    for s, t, text in pairs:
        gold = parse_pharaoh(text)
        expected_sure |= {(s.split()[i], t.split()[j]) for i, j in gold.sure}
        expected_possible |= {(s.split()[i], t.split()[j]) for i, j in gold.possible}
    assert {(src_words[i], tgt_words[j]) for i, j in joined.sure} == expected_sure
    assert {(src_words[i], tgt_words[j]) for i, j in joined.possible} == expected_possible
    assert (6, 8) in joined.possible - joined.sure  # `is ? est` moved by 4 source and 4 target words
    assert len(joined.sure) == 8


def test_joining_rejects_links_past_a_pair_s_words():
    with pytest.raises(ValueError, match="outside the sentence"):
        join_linked_pairs([("a b", "x", "2-0")])
