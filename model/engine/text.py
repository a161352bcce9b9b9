"""Input hygiene every engine applies before its own tokenizer: control characters out, whitespace folded,
a length limit."""

from __future__ import annotations

import unicodedata

MAX_INPUT_CHARS = 5000


def clean(text: str, limit: int | None = None) -> str:
    """Drop control characters (NUL included; also format characters and lone surrogates, Unicode category C)
    and collapse whitespace; keep every printable character. With a limit, at most that many characters, cut
    so that cleaning the result again changes nothing (no trailing space)."""
    text = unicodedata.normalize("NFC", text)
    text = "".join(ch if unicodedata.category(ch)[0] != "C" else " " for ch in text)
    text = " ".join(text.split())
    return text if limit is None else text[:limit].rstrip()


UNKNOWN_WORDS = "Words this model does not know:"  # how the unknown-words warning starts (pages match on it)


def unknown_words_warning(words: list[str], notes: list[str] | None = None) -> str:
    """The warning naming the source words outside a model's vocabulary (each by its note when given: a model
    trained on typed text says how often it saw the word and which pieces it became)."""
    notes = notes or [""] * len(words)
    named = [repr(w) + (f" ({note})" if note else "") for w, note in zip(words, notes)]
    return (f"{UNKNOWN_WORDS} {', '.join(named)}. It saw them rarely or never in training, so it may "
            f"translate them as confident nonsense.")
