"""Where an alignment goes wrong: precision and recall by kind of source word, sentence length and reordering
distance; the source words the model left untranslated (omissions); and how much of each head's attention
sinks into `</s>` and punctuation. Everything is kept as counts, so shards and groups add up exactly.

**Attribution.** A link (source word s, target word t) belongs to the group of its source word (frequency band,
token class), of its sentence (length band) or of its own reordering distance. Per group: `predicted` |A|,
`sure` |S|, `possible` |P|, `hits_sure` |A & S|, `hits_possible` |A & P|; precision, recall and AER from those
(links.Counts). A predicted link and a gold link of the same group are compared in the same group, so
precision is "of the links the method drew to such words, how many are right" and recall "of the sure links
such words have, how many were drawn".

- **Frequency band** of a source word: how often it occurred in the model's training text when the model ships
  those counts (`Engine.source_word_counts`), otherwise in the file being aligned; tokens with no letter or
  digit (punctuation) are `not a word`.
- **Token class** (a word can be in several; `other` when in none): `punctuation` (every character a Unicode
  punctuation or symbol), `number` (a digit in it), `capitalised` (first character upper case), `split` (two or
  more subword pieces), `function` (among the `FUNCTION_WORDS` most frequent words of the same counts).
- **Length**: the sentence's source words. **Distance**: |s - t * n / m| rounded, how far the link is from the
  diagonal of an n-source-word, m-target-word sentence (0 = monotone).

**Omissions**: a source word with no predicted link whose cross-attention mass over the whole output (the column
sum of the mean of every head, the method's reading: the attention all target words together give it, in units
of one target word's attention) is below `OMISSION_MASS`. **Sinks**: per head, the share of its cross-attention
(over every decoder row) on special pieces (`</s>`) and on punctuation pieces.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.links import Counts

OMISSION_MASS = 0.25  # below a quarter of one target word's attention, summed over the whole output
FUNCTION_WORDS = 100  # the most frequent words taken as function words
FREQ_BANDS = ((0, 0, "0 (unseen)"), (1, 9, "1-9"), (10, 99, "10-99"), (100, 999, "100-999"),
              (1000, 9999, "1,000-9,999"), (10000, None, "10,000+"))
NOT_A_WORD = "not a word"
CLASSES = ("punctuation", "number", "capitalised", "split", "function", "other")
LENGTH_BANDS = ((1, 10), (11, 20), (21, 30), (31, 50), (51, None))
DISTANCE_BANDS = ((0, 0), (1, 1), (2, 3), (4, 7), (8, None))
GROUPS = ("frequency", "token_class", "length", "distance")
KEYS = ("predicted", "sure", "possible", "hits_sure", "hits_possible")
TOP_OMITTED = 30
_DISTANCE_STARTS = np.array([lo for lo, _ in DISTANCE_BANDS])
_WORD_MEMO = 50_000  # source words whose band and classes are remembered at once


def _band_name(lo: int, hi: int | None) -> str:
    return f"{lo}+" if hi is None else (str(lo) if lo == hi else f"{lo}-{hi}")


def band_of(value: int, bands: Sequence[tuple[int, int | None]]) -> str:
    for lo, hi in bands:
        if value >= lo and (hi is None or value <= hi):
            return _band_name(lo, hi)
    return _band_name(*bands[0])


def is_punctuation(word: str) -> bool:
    return bool(word) and all(unicodedata.category(c)[0] in "PS" for c in word)


def _has_word_char(word: str) -> bool:
    return any(c.isalnum() for c in word)


@dataclass(frozen=True)
class WordStats:
    """Source word frequencies (case-folded) and where they come from: `training` or `file`."""

    counts: Mapping[str, int]
    origin: str
    function_words: frozenset[str] = frozenset()

    @classmethod
    def of(cls, counts: Mapping[str, int], origin: str) -> WordStats:
        top = sorted(((n, w) for w, n in counts.items() if _has_word_char(w)), key=lambda x: (-x[0], x[1]))
        return cls(counts, origin, frozenset(w for _, w in top[:FUNCTION_WORDS]))

    @classmethod
    def from_sources(cls, sources: Iterable[str]) -> WordStats:
        """Counts of the whitespace words of the given source sentences (the file's own)."""
        return cls.of(Counter(w.casefold() for s in sources for w in s.split()), "file")

    def band(self, word: str) -> str:
        if not _has_word_char(word):
            return NOT_A_WORD
        return next(name for lo, hi, name in FREQ_BANDS
                    if self.counts.get(word.casefold(), 0) >= lo and (hi is None
                                                                     or self.counts.get(word.casefold(), 0) <= hi))

    def classes(self, word: str, pieces: int) -> list[str]:
        out = []
        if is_punctuation(word):
            out.append("punctuation")
        if any(c.isdigit() for c in word):
            out.append("number")
        if word[:1].isupper():
            out.append("capitalised")
        if pieces >= 2:
            out.append("split")
        if word.casefold() in self.function_words:
            out.append("function")
        return out or ["other"]


def _counts_row(c: np.ndarray) -> dict[str, Any]:
    a, s, p, a_s, a_p = (int(x) for x in c)
    r = Counts(a, s, a_s, a_p)
    return {"predicted": a, "sure": s, "possible": p, "hits_sure": a_s, "hits_possible": a_p,
            "precision": r.precision if a else None, "recall": r.recall if s else None,
            "aer": r.aer if a + s else None}


@dataclass
class Breakdown:
    """Counts (predicted, sure, possible, hits_sure, hits_possible) per group and band, summed over sentences;
    plus the words per band for the source-word groups, omissions and sinks."""

    stats: WordStats
    omission_mass: float = OMISSION_MASS
    counts: dict[str, dict[str, np.ndarray]] = field(default_factory=lambda: {g: {} for g in GROUPS})
    words: dict[str, Counter] = field(default_factory=lambda: {"frequency": Counter(), "token_class": Counter()})
    source_words: int = 0
    omitted: int = 0
    omitted_words: Counter = field(default_factory=Counter)
    sink_mass: np.ndarray | None = None  # (2, L, h): mass on specials, on punctuation
    sink_rows: int = 0
    _memo: dict[tuple[str, bool], tuple[str, list[str]]] = field(default_factory=dict, repr=False)

    def _add_row(self, group: str, band: str, row: np.ndarray) -> None:
        """Add the five counts `row` to a band (the band is listed from its first sentence on, even at 0)."""
        have = self.counts[group].get(band)
        if have is None:
            self.counts[group][band] = np.asarray(row, dtype=np.int64).copy()
        else:
            have += row

    def _word(self, word: str, pieces: int) -> tuple[str, list[str]]:
        """(frequency band, token classes) of a source word, remembered (the same words recur in a corpus; the
        memo is emptied when it reaches _WORD_MEMO words, so it stays bounded)."""
        key = (word, pieces >= 2)
        got = self._memo.get(key)
        if got is None:
            if len(self._memo) >= _WORD_MEMO:
                self._memo.clear()
            got = self._memo[key] = (self.stats.band(word), self.stats.classes(word, pieces))
        return got

    def add_links(self, source_words: Sequence[str], pieces: Sequence[int], predicted: np.ndarray,
                  sure: np.ndarray, possible: np.ndarray) -> None:
        """One sentence's boolean (m_words, n_words) link matrices ([target, source])."""
        m, n = predicted.shape
        mats = np.stack((predicted, sure, possible, predicted & sure, predicted & possible))  # (5, m, n)
        per_word = mats.sum(axis=1, dtype=np.int64)  # (5, n): each source word's counts
        members: dict[tuple[str, str], list[int]] = {}  # (group, band) -> its source words, in word order
        for s, word in enumerate(source_words):
            band, classes = self._word(word, pieces[s] if s < len(pieces) else 1)
            members.setdefault(("frequency", band), []).append(s)
            for c in classes:
                members.setdefault(("token_class", c), []).append(s)
        for (group, band), words in members.items():  # each band's words' counts summed at once (integers)
            self.words[group][band] += len(words)
            self._add_row(group, band, per_word[:, words].sum(axis=1) if len(words) > 1 else per_word[:, words[0]])
        self._add_row("length", band_of(n, LENGTH_BANDS), per_word.sum(axis=1))
        t_idx, s_idx = np.indices((m, n))
        dist = np.rint(np.abs(s_idx - t_idx * (n / max(m, 1)))).astype(int)
        band = np.searchsorted(_DISTANCE_STARTS, dist, side="right") - 1  # (m, n): index into DISTANCE_BANDS
        per_band = mats.reshape(5, -1).astype(np.int64) @ np.eye(len(DISTANCE_BANDS), dtype=np.int64)[band.ravel()]
        for b, (lo, hi) in enumerate(DISTANCE_BANDS):
            self._add_row("distance", _band_name(lo, hi), per_band[:, b])

    def add_omissions(self, source_words: Sequence[str], predicted: np.ndarray, mass: np.ndarray) -> list[int]:
        """Source words with no predicted link and column mass below the threshold; returns their indices."""
        linked = predicted.any(axis=0)
        out = [s for s in range(len(source_words)) if not linked[s] and mass[s] < self.omission_mass]
        self.source_words += len(source_words)
        self.omitted += len(out)
        self.omitted_words.update(source_words[s] for s in out)
        return out

    def add_sinks(self, mass: np.ndarray, rows: int) -> None:
        self.sink_mass = mass.astype(np.float64) if self.sink_mass is None else self.sink_mass + mass
        self.sink_rows += rows

    # ---- JSON ----------------------------------------------------------------------------------------------
    def summary(self) -> dict[str, Any]:
        return {"breakdown": self.breakdown_json(), "omissions": self.omissions_json(), "sinks": self.sinks_json()}

    def breakdown_json(self) -> dict[str, Any]:
        order = {"frequency": [name for *_, name in FREQ_BANDS] + [NOT_A_WORD], "token_class": list(CLASSES),
                 "length": [_band_name(*b) for b in LENGTH_BANDS],
                 "distance": [_band_name(*b) for b in DISTANCE_BANDS]}
        out: dict[str, Any] = {"frequency_counts": self.stats.origin, "function_words": FUNCTION_WORDS}
        for group in GROUPS:
            rows = []
            for band in order[group]:
                if band not in self.counts[group] and band not in self.words.get(group, {}):
                    continue
                row = {"band": band, **_counts_row(self.counts[group].get(band, np.zeros(5, dtype=np.int64)))}
                if group in self.words:
                    row["words"] = int(self.words[group][band])
                rows.append(row)
            out[group] = rows
        return out

    def omissions_json(self) -> dict[str, Any]:
        return {"threshold": self.omission_mass, "source_words": self.source_words, "omitted": self.omitted,
                "rate": self.omitted / self.source_words if self.source_words else None,
                "words": [{"word": w, "count": c} for w, c in self.omitted_words.most_common(TOP_OMITTED)]}

    def sinks_json(self) -> dict[str, Any]:
        if self.sink_mass is None or not self.sink_rows:
            return {"rows": 0, "heads": []}
        _, layers, heads = self.sink_mass.shape
        return {"rows": self.sink_rows, "mass_special": self.sink_mass[0].tolist(),
                "mass_punctuation": self.sink_mass[1].tolist(),
                "heads": [{"layer": li + 1, "head": hi + 1,
                           "special": float(self.sink_mass[0, li, hi] / self.sink_rows),
                           "punctuation": float(self.sink_mass[1, li, hi] / self.sink_rows)}
                          for li in range(layers) for hi in range(heads)]}


def merge_summaries(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """`breakdown`, `omissions`, `sinks` of several runs (shards) summed from their counts."""
    out: dict[str, Any] = {}
    first = parts[0]
    bd: dict[str, Any] = {k: first["breakdown"][k] for k in ("frequency_counts", "function_words")}
    for group in GROUPS:
        bands: dict[str, np.ndarray] = {}
        words: dict[str, int] = {}
        order: list[str] = []
        for part in parts:
            for row in part["breakdown"][group]:
                if row["band"] not in bands:
                    order.append(row["band"])
                    bands[row["band"]] = np.zeros(5, dtype=np.int64)
                bands[row["band"]] += np.array([row[k] for k in KEYS], dtype=np.int64)
                if "words" in row:
                    words[row["band"]] = words.get(row["band"], 0) + row["words"]
        bd[group] = [{"band": b, **_counts_row(bands[b]), **({"words": words[b]} if b in words else {})}
                     for b in order]
    out["breakdown"] = bd
    om = Counter()
    for part in parts:
        om.update({w["word"]: w["count"] for w in part["omissions"]["words"]})
    total = sum(p["omissions"]["source_words"] for p in parts)
    omitted = sum(p["omissions"]["omitted"] for p in parts)
    out["omissions"] = {"threshold": first["omissions"]["threshold"], "source_words": total, "omitted": omitted,
                        "rate": omitted / total if total else None,
                        "words": [{"word": w, "count": c} for w, c in om.most_common(TOP_OMITTED)]}
    rows = sum(p["sinks"]["rows"] for p in parts)
    with_mass = [p["sinks"] for p in parts if p["sinks"]["rows"]]
    if not with_mass:
        out["sinks"] = {"rows": 0, "heads": []}
    else:
        b = Breakdown(WordStats({}, ""))
        b.sink_mass = sum(np.array([s["mass_special"], s["mass_punctuation"]]) for s in with_mass)
        b.sink_rows = rows
        out["sinks"] = b.sinks_json()
    return out
