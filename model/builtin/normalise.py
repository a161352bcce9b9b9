"""Normalise natural input to the corpus conventions (docs/corpus.md): lowercase, punctuation as its own
token, French elision as its own token (`l' oiseau`), German nouns capitalised, a final ` .`."""

from __future__ import annotations

import re
from collections.abc import Callable

from attention_lens.model.engine.text import MAX_INPUT_CHARS, clean

_ELISION = re.compile(r"\b([a-zà-ÿ]{1,2}|qu|jusqu|lorsqu|puisqu)['’]", re.IGNORECASE)
_PUNCT = re.compile(r"([.,!?;:()\"«»])")


def _cased(low: str, known_words: set[str] | frozenset[str], piece_count: Callable[[str], int] | None) -> str:
    cap = low[:1].upper() + low[1:]
    if cap == low or low in known_words:
        return low
    if cap in known_words:
        return cap
    if piece_count is not None and piece_count(cap) < piece_count(low):
        return cap
    return low


def normalise(text: str, known_words: set[str] | frozenset[str] = frozenset(),
              piece_count: Callable[[str], int] | None = None) -> str:
    """`Der Hund, den die Katze jagte, bellte.` -> `der Hund , den die Katze jagte , bellte .`

    Case: a word is lowercased unless only its capitalised form is known to the model's vocabulary (how
    German nouns keep their capital). A word that neither form names as one piece (`Königin` may be
    `▁König` + `in`) takes the form the model's tokenizer splits into fewer pieces (`piece_count`), lowercase
    on a tie: a form seen in training is made of longer pieces than one never seen.
    Returns "" for text with nothing in it. The result has at most MAX_INPUT_CHARS characters (whole words;
    the spacing added around punctuation counts), so normalising it again changes nothing.
    """
    # Lowercase first: lowering can change word boundaries (`İ` -> `i` + a combining dot), and the elision and
    # punctuation rules must see the text as a second pass would, for normalising to be idempotent.
    text = clean(text, MAX_INPUT_CHARS).lower()
    if not text:
        return ""
    text = _ELISION.sub(lambda m: m.group(1) + "' ", text)
    text = _PUNCT.sub(r" \1 ", text)
    words = []
    for word in text.split():
        words.append(_cased(word.lower(), known_words, piece_count))
    kept, length = [], 0
    for word in words:  # room for a final " ." is kept
        length += len(word) + (1 if kept else 0)
        if length > MAX_INPUT_CHARS - 2:
            break
        kept.append(word)
    if not kept:  # one word longer than the limit
        kept = [words[0][: MAX_INPUT_CHARS - 2]]
    if kept[-1] not in {".", "!", "?"}:
        kept.append(".")
    return " ".join(kept)
