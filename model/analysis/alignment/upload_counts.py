"""What the Alignment page keeps of an uploaded file, counted for every candidate method at once while the file
streams through the model, so that no sentence's attention has to be kept: the error breakdown of every method
(`MethodBreakdowns`, the same figures as breakdown.Breakdown fed one method's links), how much every two heads
agree (`HeadAgreement`), and each sentence's counts of every method spilled to a temporary file (`BlockSpill`,
memory flat; read back one method's column at a time).

Every method is an extraction x reading x selector of scoring.Tally (candidates order); its links are those of
methods.extract on that matrix (`every_mask` computes them all at once, as scoring.count_extractions does)."""

from __future__ import annotations

import tempfile
from array import array
from collections import Counter
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import (
    _DISTANCE_STARTS,
    CLASSES,
    DISTANCE_BANDS,
    FREQ_BANDS,
    LENGTH_BANDS,
    NOT_A_WORD,
    OMISSION_MASS,
    Breakdown,
    WordStats,
    _band_name,
    band_of,
)
from attention_lens.model.analysis.alignment.methods import _onehot_argmax
from attention_lens.model.analysis.alignment.words import READINGS, WordAttention

FREQ_NAMES = tuple(name for *_, name in FREQ_BANDS) + (NOT_A_WORD,)
LENGTH_NAMES = tuple(_band_name(*b) for b in LENGTH_BANDS)
DISTANCE_NAMES = tuple(_band_name(*b) for b in DISTANCE_BANDS)


def every_mask(wa: WordAttention, thresholds: Sequence[float]) -> np.ndarray:
    """(E, R, S, m, n) boolean links of every candidate method: extractions (argmax, inter, union, then each
    threshold) x readings x selectors (every head, every layer mean, the mean), in scoring.Tally's order."""
    w = np.stack([wa.stacked(r) for r in READINGS])  # (R, S, m, n)
    along_rows, along_cols = _onehot_argmax(w, -1), _onehot_argmax(w, -2)
    return np.stack([along_rows, along_rows & along_cols, along_rows | along_cols, *(w >= t for t in thresholds)])


@lru_cache(maxsize=4096)
def _distance_onehot(m: int, n: int) -> np.ndarray:
    """(m*n, bands) float32: each cell's reordering-distance band (breakdown.Breakdown.add_links' rule)."""
    t_idx, s_idx = np.indices((m, n))
    dist = np.rint(np.abs(s_idx - t_idx * (n / max(m, 1)))).astype(int)
    band = np.searchsorted(_DISTANCE_STARTS, dist.ravel(), side="right") - 1
    return np.eye(len(DISTANCE_BANDS), dtype=np.float32)[band]


class MethodBreakdowns:
    """breakdown.Breakdown's counts for every method at once: per method, group and band the links drawn and
    found (predicted, hits_sure, hits_possible); per group and band the gold links and words (method-free);
    omissions per method; sinks (method-free)."""

    def __init__(self, stats: WordStats, n_methods: int, readings: np.ndarray,
                 omission_mass: float = OMISSION_MASS) -> None:
        self.stats, self.omission_mass = stats, omission_mass
        self.readings = readings  # (M,) index into READINGS of each method
        bands = {"frequency": FREQ_NAMES, "token_class": CLASSES, "length": LENGTH_NAMES,
                 "distance": DISTANCE_NAMES}
        self.bands = bands
        self.drawn = {g: np.zeros((n_methods, 3, len(b)), dtype=np.int64) for g, b in bands.items()}
        self.gold = {g: np.zeros((2, len(b)), dtype=np.int64) for g, b in bands.items()}
        self.seen = {g: np.zeros(len(b), dtype=bool) for g, b in bands.items()}  # a band listed once touched
        self.words = {"frequency": np.zeros(len(FREQ_NAMES), dtype=np.int64),
                      "token_class": np.zeros(len(CLASSES), dtype=np.int64)}
        self.source_words = 0
        self.omitted = np.zeros(n_methods, dtype=np.int64)
        self.omitted_words: dict[int, Counter] = {}
        self.sink_mass: np.ndarray | None = None
        self.sink_rows = 0
        self._memo: dict[tuple[str, bool], tuple[int, np.ndarray]] = {}

    def _word(self, word: str, split: bool) -> tuple[int, np.ndarray]:
        key = (word, split)
        got = self._memo.get(key)
        if got is None:
            if len(self._memo) >= 50_000:
                self._memo.clear()
            classes = self.stats.classes(word, 2 if split else 1)
            got = self._memo[key] = (FREQ_NAMES.index(self.stats.band(word)),
                                     np.array([c in classes for c in CLASSES], dtype=np.int64))
        return got

    def add(self, wa: WordAttention, masks: np.ndarray, pieces: Sequence[int], sure: np.ndarray | None,
            possible: np.ndarray | None) -> np.ndarray | None:
        """One sentence: masks (M, m, n) of every method; sure / possible (m, n) its gold (None without). Returns
        its counts of every method, (M, 4) (|A|, |S|, |A & S|, |A & P|), when it has gold."""
        M, m, n = masks.shape
        words = wa.source_words
        flat = masks.reshape(M, m * n).astype(np.float32)
        # omissions: every sentence (no link drawn to the word, little mass on it under the method's reading)
        mass = np.stack([wa.matrix(r, None, None).sum(axis=0) for r in READINGS])  # (R, n)
        low = mass[self.readings] < self.omission_mass  # (M, n)
        if gold_free := (sure is None or possible is None):
            drawn = flat.reshape(M, m, n).sum(axis=1)  # (M, n)
        else:
            gold = np.stack([np.ones(m * n, dtype=np.float32), sure.ravel(), possible.ravel()])  # (3, m*n)
            both = flat[:, None, :] * gold[None]  # (M, 3, m*n): drawn, drawn & sure, drawn & possible
            per_word = np.rint(both.reshape(M, 3, m, n).sum(axis=2)).astype(np.int64)  # (M, 3, n)
            drawn = per_word[:, 0]
        omitted = (drawn == 0) & low
        self.source_words += n
        self.omitted += omitted.sum(axis=1)
        if omitted.any():
            for mi, s in zip(*np.nonzero(omitted)):
                self.omitted_words.setdefault(int(mi), Counter())[words[s]] += 1
        if gold_free:
            return None
        gold_word = np.rint(gold[1:].reshape(2, m, n).sum(axis=1)).astype(np.int64)  # (2, n) sure, possible
        freq = np.zeros((n, len(FREQ_NAMES)), dtype=np.int64)
        classes = np.zeros((n, len(CLASSES)), dtype=np.int64)
        for s, word in enumerate(words):
            band, cls = self._word(word, (pieces[s] if s < len(pieces) else 1) >= 2)
            freq[s, band] = 1
            classes[s] = cls
        for group, member in (("frequency", freq), ("token_class", classes)):
            self.drawn[group] += per_word @ member
            self.gold[group] += gold_word @ member
            self.words[group] += member.sum(axis=0)
            self.seen[group] |= member.any(axis=0)
        length = LENGTH_NAMES.index(band_of(n, LENGTH_BANDS))
        totals = per_word.sum(axis=2)  # (M, 3)
        self.drawn["length"][:, :, length] += totals
        self.gold["length"][:, length] += gold_word.sum(axis=1)
        self.seen["length"][length] = True
        onehot = _distance_onehot(m, n)
        self.drawn["distance"] += np.rint(both @ onehot).astype(np.int64)
        self.gold["distance"] += np.rint(gold[1:] @ onehot).astype(np.int64)
        self.seen["distance"][:] = True
        return np.stack([totals[:, 0], np.full(M, int(sure.sum())), totals[:, 1], totals[:, 2]], axis=1)

    def add_sinks(self, mass: np.ndarray, rows: int) -> None:
        self.sink_mass = mass.astype(np.float64) if self.sink_mass is None else self.sink_mass + mass
        self.sink_rows += rows

    def of(self, k: int) -> Breakdown:
        """Method k's breakdown.Breakdown (its summary() is the figures the page shows)."""
        out = Breakdown(self.stats, self.omission_mass)
        for group, names in self.bands.items():
            for b, name in enumerate(names):
                if self.seen[group][b]:
                    a, a_s, a_p = self.drawn[group][k, :, b]
                    s, p = self.gold[group][:, b]
                    out.counts[group][name] = np.array([a, s, p, a_s, a_p], dtype=np.int64)
            if group in self.words:
                out.words[group].update({name: int(self.words[group][b]) for b, name in enumerate(names)
                                         if self.seen[group][b]})
        out.source_words, out.omitted = self.source_words, int(self.omitted[k])
        out.omitted_words = Counter(self.omitted_words.get(k, {}))
        out.sink_mass, out.sink_rows = self.sink_mass, self.sink_rows
        return out

    def nbytes(self) -> int:
        return (sum(a.nbytes for a in self.drawn.values()) + sum(a.nbytes for a in self.gold.values())
                + self.omitted.nbytes + 64 * sum(len(c) for c in self.omitted_words.values()))


class HeadAgreement:
    """For every extraction x reading, the links two heads share and the links each draws, summed over sentences:
    agreement 2|A & B| / (|A| + |B|) of every two heads."""

    def __init__(self, extractions: int, heads: int) -> None:
        self.heads = heads
        self.shared = np.zeros((extractions, len(READINGS), heads, heads), dtype=np.int64)
        self.drawn = np.zeros((extractions, len(READINGS), heads), dtype=np.int64)

    def add(self, masks: np.ndarray) -> None:
        """masks (E, R, S, m, n) of one sentence (every_mask)."""
        E, R, _, m, n = masks.shape
        heads = masks[:, :, :self.heads].reshape(E, R, self.heads, m * n).astype(np.float32)
        self.shared += np.rint(heads @ heads.transpose(0, 1, 3, 2)).astype(np.int64)
        self.drawn += np.rint(heads.sum(axis=-1)).astype(np.int64)

    def matrix(self, extraction: int, reading: int) -> np.ndarray:
        shared, drawn = self.shared[extraction, reading], self.drawn[extraction, reading]
        total = drawn[:, None] + drawn[None, :]
        out = np.where(total > 0, 2 * shared / np.maximum(total, 1), 1.0)
        np.fill_diagonal(out, 1.0)
        return out


class BlockSpill:
    """Each sentence's counts of every method ((M, 4) int32) in a temporary file, with its id and |P| in memory
    (16 bytes a sentence); `column(k)` reads method k's counts of every sentence back, a slab at a time."""

    SLAB = 4096  # sentences read at once

    def __init__(self, methods: int) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close() / when collected
        self.methods = methods
        self.ids = array("q")
        self.possible = array("q")

    def add(self, sentence: int, block: np.ndarray, possible: int) -> None:
        self.file.write(np.ascontiguousarray(block, dtype=np.int32).tobytes())
        self.ids.append(sentence)
        self.possible.append(possible)

    def __len__(self) -> int:
        return len(self.ids)

    def column(self, k: int) -> np.ndarray:
        """(N, 4) int64: method k's (|A|, |S|, |A & S|, |A & P|) of every sentence, in the order added."""
        out = np.zeros((len(self), 4), dtype=np.int64)
        self.file.flush()
        self.file.seek(0)
        size = self.methods * 4 * 4
        for start in range(0, len(self), self.SLAB):
            count = min(self.SLAB, len(self) - start)
            slab = np.frombuffer(self.file.read(size * count), dtype=np.int32).reshape(count, self.methods, 4)
            out[start:start + count] = slab[:, k]
        return out

    def close(self) -> None:
        self.file.close()

    def __getstate__(self) -> dict[str, Any]:
        raise TypeError("a BlockSpill lives in its temporary file: keep it in one process (st.cache_resource)")
