"""Normalise natural input to the corpus conventions (corpus-spec.md): lowercase, punctuation as its own
token, French elision as its own token (`l' oiseau`), German nouns capitalised, a final ` .`."""

from __future__ import annotations

import re
import unicodedata

MAX_INPUT_CHARS = 5000

_ELISION = re.compile(r"\b([a-zà-ÿ]{1,2}|qu|jusqu|lorsqu|puisqu)['’]", re.IGNORECASE)
_PUNCT = re.compile(r"([.,!?;:()\"«»])")


def clean(text: str) -> str:
    """Drop control characters (NUL included) and collapse whitespace; keep every printable character."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    return " ".join(text.split())


def normalise(text: str, known_words: set[str] | frozenset[str] = frozenset()) -> str:
    """`Der Hund, den die Katze jagte, bellte.` -> `der Hund , den die Katze jagte , bellte .`

    Case: a word is lowercased unless only its capitalised form is known to the model's vocabulary
    (how German nouns keep their capital). Returns "" for text with nothing in it.
    """
    text = clean(text)[:MAX_INPUT_CHARS]
    if not text:
        return ""
    text = _ELISION.sub(lambda m: m.group(1) + "' ", text)
    text = _PUNCT.sub(r" \1 ", text)
    words = []
    for word in text.split():
        low = word.lower()
        cap = low[:1].upper() + low[1:]
        words.append(cap if (low not in known_words and cap in known_words) else low)
    if words[-1] not in {".", "!", "?"}:
        words.append(".")
    return " ".join(words)
