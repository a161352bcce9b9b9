"""Counting every candidate method against gold links at once, summed over a corpus (`Tally`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from attention_lens.model.analysis.alignment.links import Counts, Gold
from attention_lens.model.analysis.alignment.methods import (
    HEADLESS,
    SEARCH_THRESHOLDS,
    Method,
    _onehot_argmax,
    candidates,
)
from attention_lens.model.analysis.alignment.words import READINGS, WordAttention


def gold_matrices(gold: Gold, m_words: int, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """(sure, possible) boolean (m_words, n_words), [target, source]."""
    sure = np.zeros((m_words, n_words), dtype=bool)
    possible = np.zeros((m_words, n_words), dtype=bool)
    for i, j in gold.sure:
        sure[j, i] = True
    for i, j in gold.possible:
        possible[j, i] = True
    return sure, possible


def count_extractions(w: np.ndarray, sure: np.ndarray, possible: np.ndarray,
                      thresholds: tuple[float, ...]) -> np.ndarray:
    """(|A|, |S|, |A & S|, |A & P|) of every extraction of w (R, S, m, n) (readings x selectors), in candidate
    order: argmax, inter, union, then each threshold; within each, reading by reading, selector by selector.
    The same links as methods.extract gives each on its own, found at once: the two argmax one-hots once, every
    extraction stacked, the counts one product."""
    if not sure.size:  # no word on one side: nothing predicted, nothing to find
        return np.zeros(((len(thresholds) + 3) * w.shape[0] * w.shape[1], 4), dtype=np.int64)
    along_rows = _onehot_argmax(w, -1)  # each target word's most attended source word
    along_cols = _onehot_argmax(w, -2)  # each source word's most attending target word
    masks = np.stack([along_rows, along_rows & along_cols, along_rows | along_cols, *(w >= t for t in thresholds)])
    flat = masks.reshape(-1, sure.size).astype(np.float32)  # counts up to m x n: exact in float32
    gold = np.stack([np.ones(sure.size), sure.ravel(), possible.ravel()], axis=1).astype(np.float32)
    a, a_s, a_p = np.rint(flat @ gold).astype(np.int64).T
    return np.stack([a, np.full(len(a), int(sure.sum()), dtype=np.int64), a_s, a_p], axis=1)


def count_extractions_many(ws: list[np.ndarray], sures: list[np.ndarray], possibles: list[np.ndarray],
                           thresholds: tuple[float, ...], chunk: int = 8) -> list[np.ndarray]:
    """count_extractions of several sentences, the same integers, found `chunk` sentences at a time: each chunk's
    w padded to its longest sides with -1 (below every weight, so no argmax, maximum or threshold moves, and a
    line of padding alone has no maximum above 0), its gold with False, and counted in whole arrays."""
    out: list[np.ndarray] = []
    for start in range(0, len(ws), chunk):
        part = range(start, min(start + chunk, len(ws)))
        r, s = ws[start].shape[:2]
        m = max(ws[k].shape[2] for k in part)
        n = max(ws[k].shape[3] for k in part)
        w = np.full((len(part), r, s, m, n), -1.0, dtype=ws[start].dtype)
        gold = np.zeros((len(part), 2, m, n), dtype=bool)
        for b, k in enumerate(part):
            mk, nk = ws[k].shape[2:]
            w[b, :, :, :mk, :nk] = ws[k]
            gold[b, 0, :mk, :nk] = sures[k]
            gold[b, 1, :mk, :nk] = possibles[k]
        along_rows = _onehot_argmax(w, -1)
        along_cols = _onehot_argmax(w, -2)
        masks = np.stack([along_rows, along_rows & along_cols, along_rows | along_cols,
                          *(w >= t for t in thresholds)], axis=1).reshape(len(part), -1, m * n)  # (b, K, m*n)
        gold = gold.reshape(len(part), 2, 1, m * n)
        a = np.count_nonzero(masks, axis=-1)
        a_s = np.count_nonzero(masks & gold[:, 0], axis=-1)
        a_p = np.count_nonzero(masks & gold[:, 1], axis=-1)
        n_sure = np.count_nonzero(gold[:, 0], axis=(-2, -1))
        for b in range(len(part)):
            out.append(np.stack([a[b], np.full(a.shape[1], n_sure[b]), a_s[b], a_p[b]], axis=1).astype(np.int64))
    return out


@dataclass
class Tally:
    """Counts of every candidate method, summed over sentences. counts[k] = (|A|, |S|, |A&S|, |A&P|)."""

    layers: int
    heads: int
    thresholds: tuple[float, ...] = SEARCH_THRESHOLDS
    weights: str = "raw"  # the weights every counted method reads (methods.WEIGHTS)
    counts: np.ndarray = field(init=False)
    n: int = 0

    def __post_init__(self) -> None:
        self.methods = candidates(self.layers, self.heads, self.thresholds, self.weights)
        self.index = {meth.name: k for k, meth in enumerate(self.methods)}
        self.counts = np.zeros((len(self.methods), 4), dtype=np.int64)

    def block(self, wa: WordAttention, gold: Gold) -> np.ndarray:
        """One sentence's counts of every candidate method, (len(methods), 4) int64, in `methods` order. For
        HEADLESS weights the sentence's one matrix (its mean) is the only selector."""
        headless = self.weights in HEADLESS
        if not headless and (wa.layers, wa.heads) != (self.layers, self.heads):
            raise ValueError(f"a sentence has {wa.layers}x{wa.heads} heads, the tally {self.layers}x{self.heads}")
        sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
        stacked = {reading: (wa.reading(reading).mean(axis=(0, 1))[None] if headless else wa.stacked(reading))
                   for reading in READINGS}  # (S, m, n) each
        return count_extractions(np.stack([stacked[r] for r in READINGS]), sure, possible, self.thresholds)

    def blocks(self, sentences: list[tuple[WordAttention, Gold]]) -> list[np.ndarray]:
        """`block` of each (word attention, gold) sentence, the same integers, counted several at a time."""
        if not sentences:
            return []
        headless = self.weights in HEADLESS
        ws, sures, possibles = [], [], []
        for wa, gold in sentences:
            if not headless and (wa.layers, wa.heads) != (self.layers, self.heads):
                raise ValueError(f"a sentence has {wa.layers}x{wa.heads} heads, the tally {self.layers}x{self.heads}")
            sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
            ws.append(np.stack([wa.reading(r).mean(axis=(0, 1))[None] if headless else wa.stacked(r)
                                for r in READINGS]))
            sures.append(sure)
            possibles.append(possible)
        return count_extractions_many(ws, sures, possibles, self.thresholds)

    def add_block(self, block: np.ndarray) -> None:
        """Add one sentence's counts (a `block`)."""
        self.counts += block
        self.n += 1

    def add(self, wa: WordAttention, gold: Gold) -> np.ndarray:
        """Count one sentence; returns its block."""
        block = self.block(wa, gold)
        self.add_block(block)
        return block

    def merged(self, other: Tally) -> Tally:
        """The tally of both sets of sentences (counts summed)."""
        if [m.name for m in self.methods] != [m.name for m in other.methods]:
            raise ValueError("the two tallies counted different methods")
        out = Tally(self.layers, self.heads, self.thresholds, self.weights)
        out.counts = self.counts + other.counts
        out.n = self.n + other.n
        return out

    def __getitem__(self, method: Method | str) -> Counts:
        name = method if isinstance(method, str) else method.name
        if name not in self.index:
            raise KeyError(f"{name} was not counted (thresholds counted: {self.thresholds})")
        return Counts(*(int(x) for x in self.counts[self.index[name]]))

    def best(self, reading: str | None = None) -> Method:
        """The counted method with the lowest AER (ties: the first in candidate order)."""
        aer = np.array([Counts(*c).aer for c in self.counts])
        if reading is not None:
            aer = np.where([meth.reading == reading for meth in self.methods], aer, np.inf)
        return self.methods[int(np.argmin(aer))]
