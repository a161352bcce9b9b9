"""The unknown-word notice of a model trained on typed text (everyday-en-fr) and a word typed in a case it did not
see: its word counts are case-folded, so "WHERE" counted as "where" (seen 1712 times) although the tokenizer, which
keeps case, reads it letter by letter (▁W H E R E). Such a spelling (capitals past the first letter) is named when
its lower-case form is one whole piece and it is not; a capitalised first word ("Where", "Train") and an acronym
the vocabulary holds whole ("TV", "USA") are not."""

from __future__ import annotations

import pytest
from attention_lens.model.engine import load_engine

from tests.fixtures.checkpoints import shipped_checkpoint


@pytest.fixture(scope="module")
def engine():
    return load_engine(shipped_checkpoint("everyday-en-fr"))


def test_capitals_the_model_reads_letter_by_letter_are_named(engine):
    words = engine.unknown_words(engine.normalise("WHERE is THE Train StAtIoN?"))
    assert words == ["WHERE", "THE", "StAtIoN"], words


def test_usual_capitals_are_not_named(engine):
    assert engine.unknown_words(engine.normalise("Where is the train station? I saw it on TV in the USA.")) == []


def test_the_note_names_the_spelling_it_knows(engine):
    note = engine.word_note("WHERE")
    seen, read = note.split("; ")
    assert seen.startswith("not seen in this spelling") and "“where”" in seen, note
    assert read == "read as ▁W H E R E", note
