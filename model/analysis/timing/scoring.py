"""Word-start errors counted so that shards add up exactly: a histogram of whole milliseconds.

A word's error is |model start - gold start|, rounded to the nearest millisecond. Its figures (the median, the
mean, the share within 20 / 50 / 100 ms) are computed from the histogram of those whole milliseconds, so the
`align --json` outputs of shards merge into exactly the figures of one run (counts summed, never medians
averaged). The median of an even count is the mean of the two middle values, as numpy's.

`Bands` breaks the errors of the reported head set down by word length (characters of its key), position in the
clip, the silence before it in the gold timings, and its frequency (how often the word occurs in the whole
clip list's transcripts).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

WITHIN_MS = (20, 50, 100)


@dataclass
class Histogram:
    """Counts of word-start errors by whole milliseconds."""

    counts: dict[int, int] = field(default_factory=dict)

    def add(self, errors_ms: Iterable[int]) -> None:
        values, counts = np.unique(np.asarray(list(errors_ms), dtype=np.int64), return_counts=True)
        for v, c in zip(values.tolist(), counts.tolist(), strict=True):
            self.counts[v] = self.counts.get(v, 0) + c

    def merged(self, other: Histogram) -> Histogram:
        out = dict(self.counts)
        for v, c in other.counts.items():
            out[v] = out.get(v, 0) + c
        return Histogram(out)

    @property
    def n(self) -> int:
        return sum(self.counts.values())

    def _sorted(self) -> tuple[np.ndarray, np.ndarray]:
        values = np.array(sorted(self.counts), dtype=np.int64)
        return values, np.array([self.counts[v] for v in values.tolist()], dtype=np.int64)

    def quantile_value(self, k: int) -> int:
        """The k-th smallest error (0-based)."""
        values, counts = self._sorted()
        return int(values[np.searchsorted(np.cumsum(counts), k, side="right")])

    def median(self) -> float | None:
        n = self.n
        if not n:
            return None
        return (self.quantile_value((n - 1) // 2) + self.quantile_value(n // 2)) / 2

    def mean(self) -> float | None:
        n = self.n
        if not n:
            return None
        return sum(v * c for v, c in self.counts.items()) / n

    def within(self, ms: int) -> float | None:
        n = self.n
        return sum(c for v, c in self.counts.items() if v <= ms) / n if n else None

    def figures(self) -> dict[str, Any]:
        """n_words, median_start_error_ms, mean_start_error_ms, within_20ms, within_50ms, within_100ms."""
        mean = self.mean()
        out: dict[str, Any] = {"n_words": self.n, "median_start_error_ms": self.median(),
                               "mean_start_error_ms": None if mean is None else round(mean, 3)}
        for ms in WITHIN_MS:
            share = self.within(ms)
            out[f"within_{ms}ms"] = None if share is None else round(share, 6)
        return out

    def to_json(self) -> list[list[int]]:
        return [[v, self.counts[v]] for v in sorted(self.counts)]

    @classmethod
    def from_json(cls, pairs: Any) -> Histogram:
        try:
            return cls({int(v): int(c) for v, c in pairs})
        except (TypeError, ValueError):
            raise ValueError("a histogram is a list of [milliseconds, count] pairs") from None


def errors_ms(model_s: np.ndarray, gold_s: np.ndarray) -> np.ndarray:
    """|model - gold| in whole milliseconds."""
    return np.rint(np.abs(np.asarray(model_s, dtype=np.float64) - np.asarray(gold_s, dtype=np.float64)) * 1000
                   ).astype(np.int64)


BANDS: dict[str, tuple[str, ...]] = {
    "length": ("1-3 characters", "4-6 characters", "7+ characters"),
    "position": ("first word", "second word", "middle", "last word"),
    "silence_before": ("under 20 ms", "20-100 ms", "100-300 ms", "300 ms or more"),
    "frequency": ("once in the list", "2-4 times", "5-19 times", "20+ times"),
}


def band_of(group: str, value: float) -> int:
    """The band index of a word's length (characters), position (0 first, 1 second, 2 middle, 3 last), silence
    before (seconds) or frequency (count)."""
    edges = {"length": (4, 7), "position": (1, 2, 3), "silence_before": (0.02, 0.1, 0.3),
             "frequency": (2, 5, 20)}[group]
    return int(np.searchsorted(edges, value, side="right"))


@dataclass
class Bands:
    """Histograms of one head set's errors per band of each group (BANDS)."""

    hists: dict[str, list[Histogram]] = field(default_factory=lambda: {g: [Histogram() for _ in b]
                                                                       for g, b in BANDS.items()})

    def add(self, group: str, band: int, errors: list[int]) -> None:
        self.hists[group][band].add(errors)

    def merged(self, other: Bands) -> Bands:
        return Bands({g: [a.merged(b) for a, b in zip(hs, other.hists[g], strict=True)]
                      for g, hs in self.hists.items()})

    def to_json(self) -> dict[str, Any]:
        return {g: [{"band": name, **h.figures(), "histogram": h.to_json()}
                    for name, h in zip(BANDS[g], hs, strict=True)] for g, hs in self.hists.items()}

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Bands:
        try:
            return cls({g: [Histogram.from_json(row["histogram"]) for row in d[g]] for g in BANDS})
        except (KeyError, TypeError):
            raise ValueError("the breakdown lacks its histograms") from None
