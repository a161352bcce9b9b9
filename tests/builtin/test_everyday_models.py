"""The everyday models (trained on Tatoeba, text as people type it): their splits hold no training sentence,
their cards meet the targets, and a typed sentence gets a real translation with honest rare-word notes."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.corpora.grouped_split import held_out_split
from attention_lens.model.engine.text import UNKNOWN_WORDS

from tests.fixtures.checkpoints import ROOT

EVERYDAY = ("everyday-en-fr", "everyday-de-en")
TARGET_CHRF, TARGET_BLEU = 55.0, 30.0  # on the model's own test split, sacrebleu, one reference


def card(name: str) -> dict:
    return json.loads((ROOT / "checkpoints" / name / "card.json").read_text(encoding="utf-8"))


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


@pytest.mark.parametrize("name", EVERYDAY)
def test_no_test_sentence_appears_in_training(name):
    c = card(name)
    split = held_out_split(c["data"], c["seed"])
    assert (len(split["test"]), len(split["train"])) == (c["test_pairs"], c["train_pairs"])
    train_src = {_key(s) for s, _ in split["train"]}
    train_tgt = {_key(t) for _, t in split["train"]}
    assert not [s for s, _ in split["test"] if _key(s) in train_src]
    assert not [t for _, t in split["test"] if _key(t) in train_tgt]


@pytest.mark.parametrize("name", ["everyday-en-fr", "everyday-de-en"])
def test_card_says_raw_text_and_its_test_metrics_meet_the_targets(name):
    c = card(name)
    assert c["text"] == "raw" and c["variant"] == "healthy"
    m = c["test_metrics"]
    assert m["n"] == c["test_pairs"] >= 2000
    assert m["chrf"] >= TARGET_CHRF and m["bleu"] >= TARGET_BLEU, m


@pytest.mark.parametrize(("name", "text", "expected"), [("everyday-en-fr", "I love you.", "aime"),
                                                        ("everyday-de-en", "Ich liebe dich.", "I love you")])
def test_trace_of_a_first_sentence_is_a_translation_with_no_unknown_word(tmp_path, name, text, expected):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(ROOT / "checkpoints" / name),
                           "--text", text, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert UNKNOWN_WORDS not in proc.stderr
    trace = json.loads(out.read_text(encoding="utf-8"))
    assert trace["options"].get("warnings", []) == []
    written = "".join(trace["target_tokens"]).replace("\u2581", " ").replace("</s>", "").strip()
    assert expected in written, written


@pytest.fixture(scope="module")
def en_fr():
    return BuiltinEngine.load(ROOT / "checkpoints" / "everyday-en-fr")


def test_typed_text_is_read_as_typed(en_fr):
    assert en_fr.normalise("  Where is   the train station?") == "Where is the train station?"
    _, _, pieces, _ = en_fr.prepare_source("Where is the train station?")
    assert pieces[0] == "\u2581Where" and pieces[-2:] == ["?", "</s>"]


def test_rare_words_are_named_with_their_training_count_and_pieces(en_fr):
    counts = en_fr.ckpt.source_counts
    _, _, _, warnings = en_fr.prepare_source("My friend Zyxwvut likes the station.")
    (warning,) = warnings
    assert warning.startswith(UNKNOWN_WORDS)
    assert "'Zyxwvut' (never seen in training; read as " in warning
    assert counts["station"] >= 3 and "'station'" not in warning
    pieces = " ".join(en_fr.prepare_source("Zyxwvut")[2][:-1])
    assert pieces in warning


def test_numbers_emoji_and_other_scripts_pass_without_breaking(en_fr):
    for text in ("I have 3 cats and 12 dogs.", "I love you 😀.", "Москва is big.", "東京 is far."):
        trace = en_fr.trace(text)
        assert trace.target_tokens and trace.target_tokens[-1] == "</s>", text
        assert "<unk>" not in trace.source_tokens, trace.source_tokens  # byte fallback: no unknown piece


@pytest.mark.parametrize("name", ["everyday-en-fr-no-causal-mask", "everyday-en-fr-no-shift"])
def test_broken_everyday_variants_read_the_answer_and_cannot_write(name):
    """Trained with the leak, they score as trained near-perfectly and collapse when they must generate."""
    c = card(name)
    m = c["test_metrics"]
    assert c["variant"] == name.removeprefix("everyday-en-fr-") and c["text"] == "raw"
    assert m["teacher_forced_accuracy"] >= 0.95 and m["chrf"] <= 15, m
