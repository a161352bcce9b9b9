"""Vocabulary honesty next to the source box: the words of the sentence this model does not know, and the
words it does know, by part of speech, each one click away from the sentence: a small model knows a
closed vocabulary, and the page says which words are outside it rather than let them pass silently.

The rule for "does not know" is the engine's (Engine.unknown_words, before any decoding); the word list is
Engine.lexicon. A model trained on typed text has no word list but its training words' counts
(Engine.source_word_counts): the panel lists the commonest and looks any word up. A model with neither (Hugging
Face, your own data) says so instead.
"""

from __future__ import annotations

import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.services import Engine

END_MARKS = (".", "!", "?")
K_PREFIX = "vocab_pick_"
K_LOOKUP = "vocab_lookup"
COMMON = 60  # a typed-text model's commonest training words listed


def with_word(source: str, word: str) -> str:
    """`the cat .` + `sleeps` -> `the cat sleeps .`: the word goes before a final full stop, else at the end."""
    words = source.split()
    if words and words[-1] in END_MARKS:
        return " ".join([*words[:-1], word, words[-1]])
    if words and words[-1][-1:] in END_MARKS:
        return " ".join([*words[:-1], words[-1][:-1], word, words[-1][-1]])
    return " ".join([*words, word])


def _append(key: str) -> None:
    word = st.session_state.get(key)
    if word:
        st.session_state[state.K_SOURCE] = with_word(st.session_state.get(state.K_SOURCE, ""), word)
        st.session_state[state.K_PRESET] = state.CUSTOM
        st.session_state[key] = None


def unknown_notice(engine: Engine, source: str) -> list[str]:
    """A warning naming the words of `source` the model never saw; returns them."""
    if not source.strip():
        return []
    words = engine.unknown_words(engine.normalise(source))
    if words:
        named = ", ".join(f"“{state.text(w)}”" + (f" ({state.text(n)})" if (n := engine.word_note(w)) else "")
                          for w in words)
        advice = (" Build your sentence from the words it knows (“Words this model knows”, in the sidebar)."
                  if engine.lexicon() else "")
        st.warning(f"**Words this model does not know:** {named}. It saw them rarely or never in training, so "
                   f"it may translate them as confident nonsense.{advice}",
                   icon=":material/spellcheck:")
    return words


def known_words_panel(engine: Engine, container=None) -> None:
    """The model's lexicon by part of speech, in a popover (one button's room on the page); clicking a word
    puts it into the sentence."""
    lexicon = engine.lexicon()
    with (container or st).popover("Words this model knows", icon=":material/menu_book:"):
        if not lexicon:
            counts = engine.source_word_counts()
            if counts:  # a model trained on typed text: no word list, but its training words' counts
                training_words(engine, counts)
                return
            st.caption("This model comes without a word list (a Hugging Face model, or one trained on your own "
                       "data), so the app cannot list the words it knows; unknown words are flagged only if its "
                       "tokenizer has an unknown token.")
            return
        st.caption("Click a word to add it to the sentence (before its final full stop). Verbs are listed with "
                   "their forms: present, past, and the infinitive.")
        for part, entries in lexicon.items():
            st.pills(part.capitalize(), [form for forms in entries for form in forms], key=K_PREFIX + part,
                     on_change=_append, args=(K_PREFIX + part,), selection_mode="single")


def training_words(engine: Engine, counts: dict[str, int]) -> None:
    """A model trained on typed text has no word list, but the counts of its training words: how many it saw,
    the commonest (a click adds one to the sentence), and a box that looks any word up (how often training saw
    it and the pieces it becomes: Engine.word_note)."""
    st.caption(f"This model learnt from real sentences, not from a word list: its training text holds "
               f"{len(counts):,} different words (counted in lower case). The {COMMON} it saw most; click one to "
               f"add it to the sentence:")
    common = sorted(counts, key=lambda w: (-counts[w], w))[:COMMON]
    st.pills("Commonest words", common, key=K_PREFIX + "common", on_change=_append, args=(K_PREFIX + "common",),
             selection_mode="single", label_visibility="collapsed")
    word = st.text_input("Look up a word", key=K_LOOKUP, placeholder="station", max_chars=100)
    first = (word or "").split()[:1]
    if first:
        n = counts.get(first[0].casefold(), 0)
        note = engine.word_note(first[0]) or ("never seen in training" if n == 0 else
                                                f"seen {n} time{'s' * (n != 1)} in training")
        st.caption(f"“{state.text(first[0])}”: {state.text(note)}")


def source_help(engine: Engine, source: str, container=None) -> None:
    """The one call a page makes next to its source box: the unknown-word notice (only when there are unknown
    words) there, and the button that opens the word panel in `container` (default: the sidebar, under the
    model it describes, so that the page's own layout above the fold gains no row)."""
    hint = services.language_hint(engine, source) if source.strip() else None
    if hint:
        st.info(state.text(hint), icon=":material/translate:")
    unknown_notice(engine, source)
    known_words_panel(engine, container or st.sidebar)
