"""The sidebar's "Words this model knows" on a model trained on typed text (everyday-en-fr): it has no word list
by part of speech, but it ships its training words' counts, so the panel says how many words it saw, lists the
commonest (a click adds one to the sentence) and looks a word up (how often training saw it, the pieces it
becomes), instead of claiming that only an unknown token can flag a word."""

from __future__ import annotations

from attention_lens.model.engine import load_engine

from tests.fixtures.apptest import shipped_app
from tests.fixtures.checkpoints import shipped_checkpoint


def test_a_typed_text_model_lists_and_looks_up_its_training_words(monkeypatch):
    counts = load_engine(shipped_checkpoint("everyday-en-fr")).source_word_counts()
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    captions = " ".join(c.value for c in at.sidebar.caption)
    assert "without a word list" not in captions
    assert f"{len(counts):,} different words" in captions, captions
    commonest = at.sidebar.pills(key="vocab_pick_common")
    assert commonest.options[0] == max(counts, key=counts.get)
    at.sidebar.text_input(key="vocab_lookup").set_value("Station").run()
    said = " ".join(c.value for c in at.sidebar.caption)
    assert f"seen {counts['station']} times in training" in said, said
    at.sidebar.pills(key="vocab_pick_common").set_value(commonest.options[1]).run()
    assert at.text_input(key="source").value.split()[-2] == commonest.options[1]
