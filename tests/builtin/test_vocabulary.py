"""Vocabulary honesty: words a model never saw are found before decoding and named in the Trace's
`options.warnings` and on the CLI's stderr; the lexicon offered to students holds only words the model knows."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from attention_lens.model.engine import load_engine
from attention_lens.model.engine.text import UNKNOWN_WORDS

from harness.models import hf_tiny
from tests.fixtures.checkpoints import ROOT

MUST_SHOW = [("en-fr", "I love you so much .", ["you", "so", "much"]),
             ("de-en", "Ich liebe dich .", ["ich", "liebe", "dich"])]


def _unknown_warnings(warnings: list[str]) -> list[str]:
    return [w for w in warnings if w.startswith(UNKNOWN_WORDS)]


@pytest.mark.parametrize("model,text,words", MUST_SHOW, ids=[m for m, _, _ in MUST_SHOW])
def test_cli_trace_names_the_unknown_words(tmp_path, model, text, words):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(ROOT / "checkpoints" / model),
                           "--text", text, "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (warning,) = _unknown_warnings(json.loads(out.read_text(encoding="utf-8"))["options"]["warnings"])
    for word in words:
        assert f"'{word}'" in warning
        assert f"'{word}'" in proc.stderr
    assert "warning: " + UNKNOWN_WORDS in proc.stderr


@pytest.mark.parametrize("model", ["en-fr", "de-en", "en-fr-no-shift"])
def test_known_words_give_no_warning(model):  # the grammar models' presets (the everyday ones are typed text)
    """Every preset sentence, and a sentence built from the lexicon's words, is all known words."""
    engine = load_engine(ROOT / "checkpoints" / model)
    presets = json.loads((ROOT / "assets" / "presets.json").read_text(encoding="utf-8"))["presets"]
    pair = engine.card["pair"]
    sources = [p["source"] for p in presets if p["pair"] == pair and p.get("text", "conventions") == "conventions"]
    assert sources
    for source in sources:
        assert engine.unknown_words(engine.normalise(source)) == [], source
    lex = engine.lexicon()
    assert {"nouns", "adjectives", "verbs", "prepositions", "determiners"} <= set(lex)
    every = " ".join(form for entries in lex.values() for forms in entries for form in forms)
    assert engine.unknown_words(every) == []
    assert _unknown_warnings(engine.prepare_source(every)[3]) == []


def test_lexicon_is_the_source_language():
    en, de = (load_engine(ROOT / "checkpoints" / m).lexicon() for m in ("en-fr", "de-en"))
    assert ("cat",) in en["nouns"] and ("sleeps", "slept", "sleep") in en["verbs"]
    assert ("Katze",) in de["nouns"] and ("schläft", "schlief", "schlafen") in de["verbs"]
    assert "der" in {f for (f,) in de["determiners"]} and "the" not in {f for (f,) in de["determiners"]}


def test_the_warning_comes_before_decoding():
    """prepare_source (no forward pass) already names the words."""
    engine = load_engine(ROOT / "checkpoints" / "en-fr")
    assert engine.unknown_words(engine.normalise("hello world")) == ["hello", "world"]
    (warning,) = _unknown_warnings(engine.prepare_source("hello world, hello!")[3])
    assert warning.count("'hello'") == 1


def test_hugging_face_says_nothing_unless_its_tokenizer_gives_unk(tmp_path):
    marian = load_engine(hf_tiny.build_marian(tmp_path / "marian"))
    assert marian.unknown_words(marian.normalise("the cat sat on the mat .")) == []
    assert marian.unknown_words("the 猫 sat") == ["猫"]  # no piece covers this character: <unk>
    assert _unknown_warnings(marian.prepare_source("the 猫 sat")[3])
    assert marian.lexicon() == {}
    bart = load_engine(hf_tiny.build_bart(tmp_path / "bart"))  # byte-level BPE: no unknown token at all
    assert bart.unknown_words("the 猫 sat") == []
