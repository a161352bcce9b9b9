"""Vocabulary honesty on the pages: the unknown-word notice next to the source box and the
"words this model knows" panel, on the shipped models."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from attention_lens.app import registry
from attention_lens.app.screens.vocabulary import with_word
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[3] / "app"
ENTRY, LEAK = str(APP / "streamlit_app.py"), str(APP / "screens" / "leakage_lab.py")
MUST_SHOW = [("en-fr", "I love you so much .", ["you", "so", "much"]),
             ("de-en", "Ich liebe dich .", ["ich", "liebe", "dich"])]


def start(monkeypatch, model: str, source: str, page: str = ENTRY) -> AppTest:
    monkeypatch.setattr(registry, "SOURCES", [registry.shipped_entries])
    monkeypatch.setenv("LENS_DEFAULT_MODEL", model)
    st.cache_resource.clear()
    at = AppTest.from_file(page, default_timeout=120)
    at.session_state["model"] = model
    at.session_state["source"] = source
    at.session_state["preset"] = "custom"
    return at.run()


def notices(at: AppTest) -> list[str]:
    return [w.value for w in at.warning if "does not know" in w.value]


@pytest.mark.parametrize("model,text,words", MUST_SHOW, ids=[m for m, _, _ in MUST_SHOW])
def test_explore_names_the_unknown_words_once(monkeypatch, model, text, words):
    at = start(monkeypatch, model, text)
    assert not at.exception
    (notice,) = notices(at)  # once: the trace's copy of the warning is not repeated under the tokens
    for word in words:
        assert f"“{word}”" in notice
    assert "Words this model knows" in [p.proto.popover.label for p in at.get("popover")]


def test_known_sentence_has_no_notice_and_a_clicked_word_joins_the_sentence(monkeypatch):
    at = start(monkeypatch, "en-fr", "the cat sat on the mat .")
    assert not at.exception and notices(at) == []
    nouns = at.button_group(key="vocab_pick_nouns")
    assert "river" in nouns.options
    nouns.set_value("river").run()
    assert at.session_state["source"] == "the cat sat on the mat river ."
    assert at.session_state["preset"] == "custom"
    verbs = list(at.button_group(key="vocab_pick_verbs").options)
    assert verbs[:3] == ["sleeps", "slept", "sleep"]


def test_leakage_lab_shows_the_notice_too(monkeypatch):
    at = start(monkeypatch, "de-en", "Ich liebe dich .", page=LEAK)
    assert not at.exception
    assert len(notices(at)) == 1


def test_with_word():
    assert with_word("the cat .", "sleeps") == "the cat sleeps ."
    assert with_word("the cat.", "sleeps") == "the cat sleeps ."
    assert with_word("", "the") == "the"
    assert with_word("the", "cat") == "the cat"
