"""What a built-in model knows of its source language: which typed words it never saw (found before
decoding) and the lexicon a student can build sentences from.

The rule for an unknown word: its normalised form is not one whole-word piece (`▁word`) of the model's
source SentencePiece vocabulary. The shipped tokenizers are BPE trained with room for every corpus word, so
each word seen in training is one piece and a word never seen falls apart into smaller pieces
(`you` -> `▁y` `ou`) or `<unk>`. A word that happens to equal an intermediate BPE merge (`i`, `you`) is a piece
too, so for a corpus pair a word must also be a form of its lexicon (BuiltinEngine._known_words); a model trained
on its own data has no lexicon and keeps the piece rule alone.

The lexicon comes from the corpus word tables (model/corpora/lexicon.py, docs/corpus.md) of the model's
language pair, each form kept only if the model's vocabulary holds it as a whole word, so every word offered
passes the rule above.
"""

from __future__ import annotations

from collections.abc import Iterable

from attention_lens.model.corpora import lexicon as lx
from attention_lens.model.corpora.german import DEFINITE, INDEFINITE

Lexicon = dict[str, list[tuple[str, ...]]]

_EN_FUNCTION = ("not", "does", "did", "will", "that", "of", "because")
_DE_FUNCTION = ("nicht", "wird", "sich", "weil", ",")
_DE_ENDINGS = ("e", "en", "er", "es")


def unknown_words(normalised: str, known: frozenset[str]) -> list[str]:
    """The words of a normalised text that are not whole-word pieces, each once, in order."""
    out: list[str] = []
    for word in normalised.split():
        if word not in known and word not in out:
            out.append(word)
    return out


def _english() -> Lexicon:
    return {
        "nouns": [(n,) for n in lx.NOUNS],
        "adjectives": [(a,) for a in lx.ADJECTIVES],
        "verbs": [v.en for v in lx.VERBS.values()],
        "prepositions": [(p,) for p in lx.PREPOSITIONS],
        "determiners": [("the",), ("a",), ("an",)],
        "other words": [(w,) for w in _EN_FUNCTION],
    }


def _german() -> Lexicon:
    nouns = [(n.de, n.de_gen) if n.de_gen != n.de else (n.de,) for n in (*lx.NOUNS.values(), lx.RIVER_BANK)]
    articles = dict.fromkeys(a for table in (DEFINITE, INDEFINITE) for forms in table.values()
                             for a in forms.values())
    return {
        "nouns": nouns,
        "adjectives": [tuple(a.de_stem + e for e in _DE_ENDINGS) for a in lx.ADJECTIVES.values()],
        "verbs": [v.de for v in lx.VERBS.values()],
        "prepositions": [(de,) for _, de in lx.PREPOSITIONS.values()] + [("im",)],
        "determiners": [(a,) for a in articles],
        "other words": [(w,) for w in _DE_FUNCTION],
    }


_SOURCES = {"en": _english, "de": _german}


def lexicon(pair: str | None, known: frozenset[str]) -> Lexicon:
    """The source-language lexicon of a corpus pair ("en-fr", "de-en") by part of speech, every form a whole
    word of the vocabulary `known`; {} for a pair without word tables."""
    if pair not in ("en-fr", "de-en"):
        return {}
    build = _SOURCES[pair.split("-")[0]]
    out: Lexicon = {}
    for part, entries in build().items():
        kept = [forms for forms in (_known(e, known) for e in entries) if forms]
        if kept:
            out[part] = kept
    return out


def _known(forms: Iterable[str], known: frozenset[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(f for f in forms if f in known))
