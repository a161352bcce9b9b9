"""Meters for the three bug switches of model.engine.bugs, read off Traces (pure numpy).

- mask after the softmax: how much each decoder self-attention row sums to, and the weight left on later keys;
- swapped cross-attention: the (n source queries, m target keys) weights, and how much of them lands on target
  positions after the row's own position (the future the decoder row then receives);
- no 1/sqrt(d_k): the entropy of every attention row and its largest weight, against the healthy run.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_lens.model.analysis.leakage import future_mass
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.trace import KINDS, Trace


@dataclass(frozen=True)
class RowSums:
    """Decoder self-attention rows of one teacher-forced run. Arrays (L, h, m)."""

    sums: np.ndarray  # what each row sums to (1 when the mask goes on the scores)
    future: np.ndarray  # the weight each row puts on keys after its own position

    @property
    def min_sum(self) -> float:
        return float(self.sums.min()) if self.sums.size else 1.0

    @property
    def max_future(self) -> float:
        return float(self.future.max()) if self.future.size else 0.0

    @property
    def mean_missing(self) -> float:
        """The share of a row lost on average (1 - sum)."""
        return float(1.0 - self.sums.mean()) if self.sums.size else 0.0


def row_sums(trace: Trace) -> RowSums:
    w = trace.decoder_self_attention.astype(np.float64)  # (L, h, m, m)
    return RowSums(w.sum(-1), future_mass(w))


@dataclass(frozen=True)
class SwapMeter:
    """The swapped cross-attention of a run with n == m: queries are source positions, keys target ones."""

    weights: np.ndarray  # (L, h, n, m), as the trace stores it (its "cross_attention")
    future: np.ndarray  # (L, h, n): the weight source row i puts on target positions j > i

    @property
    def max_future(self) -> float:
        return float(self.future.max()) if self.future.size else 0.0

    @property
    def mean_future(self) -> float:
        return float(self.future.mean()) if self.future.size else 0.0


def swap_meter(trace: Trace) -> SwapMeter:
    """Row i of the swapped output is added to decoder row i, so whatever source row i takes from target
    positions after i reaches a decoder row that should not see them: the future leaks through the swap."""
    w = trace.cross_attention.astype(np.float64)
    return SwapMeter(w, future_mass(w))


@dataclass(frozen=True)
class Sharpness:
    """Per attention kind: the mean row entropy (nats) and the mean of each row's largest weight."""

    entropy: dict[str, float]
    top_weight: dict[str, float]


def row_entropy(w: np.ndarray) -> np.ndarray:
    """w (..., keys) rows of weights -> (...) entropy in nats (0 log 0 = 0)."""
    w = w.astype(np.float64)
    logs = np.log(np.where(w > 0, w, 1.0))
    return -(w * logs).sum(-1)


def sharpness(trace: Trace) -> Sharpness:
    """Every row of every kind counts (a masked key holds 0 and adds nothing to the entropy)."""
    entropy, top = {}, {}
    for kind in KINDS:
        w = getattr(trace, kind)
        entropy[kind] = float(row_entropy(w).mean()) if w.size else 0.0
        top[kind] = float(w.max(-1).mean()) if w.size else 0.0
    return Sharpness(entropy, top)


def equal_length_target(engine: Engine, source: str, target: str) -> str | None:
    """A target of exactly as many tokens as the source, from the reference's words (cut, or repeated from the
    start when too short), so that the swapped cross-attention can run on it; None when no cut of up to three
    times the source's length lands on that count (a word of many pieces can step over it)."""
    n = len(engine.prepare_source(source)[1])
    words = target.split() or ["."]
    tried = []
    for k in range(1, 3 * n + 1):
        text = " ".join((words * (k // len(words) + 1))[:k])
        tried.append((abs(k - len(words)), text))
    for _, text in sorted(tried):
        if len(engine.prepare_target(text)[0]) == n:
            return text
    return None
