"""The unknown-word notice of a model trained on typed text (everyday-de-en) names every word it cannot read as
such: a symbol it reads as raw bytes (🙂, like 世界), and a spelling its case-folded word counts merged with
another (`daß` counted as `dass`, but read `▁da ß`); a word it saw often is not named."""

from __future__ import annotations

import pytest
from attention_lens.model.engine import load_engine

from tests.fixtures.checkpoints import shipped_checkpoint


@pytest.fixture(scope="module")
def engine():
    return load_engine(shipped_checkpoint("everyday-de-en"))


def test_bytes_and_merged_spellings_are_named(engine):
    words = engine.unknown_words(engine.normalise("Hallo 世界 🙂 daß muß dass Hund"))
    assert words == ["世界", "🙂", "daß", "muß"], words


def test_a_symbol_glued_to_a_word_is_named(engine):
    assert engine.unknown_words(engine.normalise("Hallo🙂 Hund")) == ["🙂"]


def test_the_note_says_how_a_merged_spelling_is_read(engine):
    note = engine.word_note("daß")
    assert "dass" in note and "▁da ß" in note and "seen 8869 times" not in note.split(";")[0], note
