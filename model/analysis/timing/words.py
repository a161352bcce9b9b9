"""A speech model's tokens grouped into words and matched to gold words.

Tokens are grouped into words by the text side's rule (model.analysis.alignment.words.word_groups: a byte-level
BPE piece beginning with "Ġ", the encoded space, starts a word; any other piece continues it), special tokens
(`<|...|>`) in no word. A group's text is its pieces decoded from byte-level BPE (tokenizers' ByteLevel decoder).

Words are compared by `word_key`: Unicode NFKC, case-folded, the typographic apostrophe as "'", and every
character that is not a letter, a digit, a combining mark or an apostrophe between two of them dropped
("Hello," and "hello" match; "don't" stays "don't"; "well-known" and "wellknown" match). A word whose key is
empty (a lone dash, a full stop) is no word, on either side. The model's words and the gold words must then
agree one to one, in order; otherwise the clip is refused, naming the first word that differs.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from attention_lens.model.analysis.alignment.words import word_groups
from attention_lens.model.analysis.timing.gold import ClipGold, TimingError

APOSTROPHE_AT_AN_EDGE = re.compile(r"(?<!\w)'|'(?!\w)")  # an apostrophe not between two letters or digits


def word_key(word: str) -> str:
    """What two spellings of a word must share to be the same word (the rule in the module docstring)."""
    text = unicodedata.normalize("NFKC", word).casefold().replace("\u2019", "'")
    kept = "".join(c for c in text if c == "'" or unicodedata.category(c)[0] in "LNM")
    return APOSTROPHE_AT_AN_EDGE.sub("", kept)


def transcript_keys(text: str) -> list[str]:
    """The keys of a transcript's words (whitespace-separated), those with an empty key left out."""
    return [k for k in (word_key(w) for w in text.split()) if k]


def is_special(piece: str) -> bool:
    return piece.startswith("<|") and piece.endswith("|>")


@dataclass(frozen=True)
class TokenWord:
    """One word of the model's tokens: its text, its key, and its first and last token (indices into the
    tokens given)."""

    text: str
    key: str
    first: int
    last: int


def token_words(pieces: Sequence[str]) -> list[TokenWord]:
    """Byte-level BPE pieces (special tokens allowed) -> their words, in order (groups with an empty key left
    out)."""
    from tokenizers import decoders

    decode = decoders.ByteLevel().decode
    out = []
    for group in word_groups(list(pieces), [p for p in pieces if is_special(p)]):
        text = decode([pieces[k] for k in group]).strip()
        key = word_key(text)
        if key:
            out.append(TokenWord(text, key, group[0], group[-1]))
    return out


def first_difference(a: Sequence[str], b: Sequence[str]) -> str:
    """Where two word lists part: "word 4: 'cat' against 'hat'" or "... has 3 more words"."""
    for k, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return f"word {k}: {x!r} against {y!r}"
    return f"{abs(len(a) - len(b))} more words on the {'first' if len(a) > len(b) else 'second'} side"


def check_transcript(transcript: str, gold: ClipGold, where: str) -> None:
    """TimingError when the transcript's words are not the gold timings' words (by word_key)."""
    ours = transcript_keys(transcript)
    theirs = [word_key(w.word) for w in gold.words]
    if ours != theirs:
        raise TimingError(f"{where}: the transcript does not match the timings' words ({gold.where}): "
                          f"{first_difference(ours, theirs)}")


def match(pieces: Sequence[str], gold: ClipGold, where: str) -> list[TokenWord]:
    """The model's words over `pieces`, one per gold word; TimingError when they do not line up."""
    words = token_words(pieces)
    keys = [w.key for w in words]
    theirs = [word_key(w.word) for w in gold.words]
    if keys != theirs:
        raise TimingError(f"{where}: the model's tokens make other words than the timings ({gold.where}): "
                          f"{first_difference(keys, theirs)}")
    return words
