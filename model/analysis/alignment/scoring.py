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
