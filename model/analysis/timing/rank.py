"""Every cross-attention head ranked as a word timer, and a head set chosen greedily.

For each clip (`ClipAttention`: its cross-attention rows of the transcript's tokens over its own frames, its
words on those tokens and their gold times) the recipe of model.analysis.timing.dtw is run for every single head,
for the mean of all heads and for the head set being reported, in one batched DTW; each word's start is the time
of its first token, and its error against the gold start is counted (model.analysis.timing.scoring).

`choose_heads`: greedy forward selection on a selection part. Start from no head; at each step add the head
whose addition gives the lowest mean absolute word-start error over the selection clips; stop when no head
lowers it. The mean (not the median) is the criterion: it is continuous where the median moves in 20 ms frames,
and it counts the large misses that the share within 100 ms counts.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from attention_lens.model.analysis.timing.dtw import FILTER_WIDTH, FRAME_S, dtw_row_starts, head_matrices
from attention_lens.model.analysis.timing.gold import ClipGold
from attention_lens.model.analysis.timing.scoring import Bands, Histogram, band_of, errors_ms
from attention_lens.model.analysis.timing.words import TokenWord

Head = tuple[int, int]  # (layer, head), 0-based as generation_config.alignment_heads
GRID_CELLS = 2_000_000  # cells per batched DTW (float64 input, its negative, float32 costs, int8 steps: ~40 MB)


@dataclass(frozen=True)
class ClipAttention:
    """What ranking needs of one clip. cross: (L, H, R, F) float32, the rows that read the transcript's tokens
    1..R (prompt rows left out, as transformers does), over the clip's F encoder frames; words: the model's words,
    `first` / `last` indices into the R + 1 transcript tokens (the last one, <|endoftext|>, read by no row);
    frequencies: how often each word occurs in the whole clip list."""

    index: int
    name: str
    cross: np.ndarray
    words: tuple[TokenWord, ...]
    gold: ClipGold
    duration_s: float
    frequencies: tuple[int, ...] = ()
    frame_s: float = FRAME_S  # seconds per encoder position (the Trace's source["frame_s"])

    def __post_init__(self) -> None:
        if self.cross.ndim != 4:
            raise ValueError(f"{self.name}: cross-attention must be (layers, heads, rows, frames), not "
                             f"{self.cross.shape}")
        if len(self.words) != len(self.gold.words):
            raise ValueError(f"{self.name}: {len(self.words)} model words for {len(self.gold.words)} gold words")
        if self.words and self.words[-1].last > self.cross.shape[2]:
            raise ValueError(f"{self.name}: a word's token lies past the {self.cross.shape[2]} rows")

    @property
    def firsts(self) -> np.ndarray:
        return np.array([w.first for w in self.words], dtype=np.int64)

    @property
    def gold_starts(self) -> np.ndarray:
        return np.array([w.start for w in self.gold.words], dtype=np.float64)


def all_heads(layers: int, heads: int) -> list[Head]:
    return [(layer, head) for layer in range(layers) for head in range(heads)]


def _token_times(starts: np.ndarray, frame_s: float) -> np.ndarray:
    """(R,) row starts (frames) -> (R + 1,) token times in seconds, the last token repeating the one before."""
    times = starts * frame_s
    return np.append(times, times[-1]) if len(times) else np.zeros(1)


def _dtw_chunks(matrices: list[np.ndarray]) -> Iterator[tuple[int, np.ndarray]]:
    """(offset, row starts) of the matrices, batched into grids of at most GRID_CELLS cells."""
    k = 0
    while k < len(matrices):
        end = k + 1
        rows, cols = matrices[k].shape
        while end < len(matrices):
            r, c = max(rows, matrices[end].shape[0]), max(cols, matrices[end].shape[1])
            if r * c * (end + 1 - k) > GRID_CELLS:
                break
            rows, cols, end = r, c, end + 1
        grid = np.zeros((end - k, rows, cols), dtype=np.float32)
        for b, m in enumerate(matrices[k:end]):
            grid[b, :m.shape[0], :m.shape[1]] = m
        yield k, dtw_row_starts(grid, [m.shape for m in matrices[k:end]])
        k = end


def set_row_starts(per_clip: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Each (C, R, F) stack of averaged matrices -> (C, R) row starts, every clip's C matrices in one DTW batch."""
    flat = [m for stack in per_clip for m in stack]
    starts: list[np.ndarray] = [np.empty(0)] * len(flat)
    for offset, s in _dtw_chunks(flat):
        for b in range(len(s)):
            starts[offset + b] = s[b, :flat[offset + b].shape[0]]
    out, k = [], 0
    for stack in per_clip:
        out.append(np.stack(starts[k:k + len(stack)]) if len(stack) else np.empty((0, 0)))
        k += len(stack)
    return out


def _bands(clip: ClipAttention) -> list[dict[str, int]]:
    """Each word's band in each group of scoring.BANDS."""
    out = []
    n = len(clip.gold.words)
    for k, (word, gold) in enumerate(zip(clip.words, clip.gold.words, strict=True)):
        silence = gold.start - (clip.gold.words[k - 1].end if k else 0.0)
        position = 0 if k == 0 else 3 if k == n - 1 else 1 if k == 1 else 2
        freq = clip.frequencies[k] if clip.frequencies else 1
        out.append({"length": band_of("length", len(word.key)), "position": position,
                    "silence_before": band_of("silence_before", silence), "frequency": band_of("frequency", freq)})
    return out


@dataclass
class Ranking:
    """The counts of a run: per head, for the mean of all heads and for the reported set (`chosen`), plus the
    reported set's breakdown and per-clip records."""

    layers: int
    heads: int
    chosen: tuple[Head, ...]
    width: int = FILTER_WIDTH
    per_head: list[Histogram] = field(default_factory=list)
    mean_of_heads: Histogram = field(default_factory=Histogram)
    reported: Histogram = field(default_factory=Histogram)
    bands: Bands = field(default_factory=Bands)
    clips: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.per_head:
            self.per_head = [Histogram() for _ in range(self.layers * self.heads)]
        for layer, head in self.chosen:
            if not (0 <= layer < self.layers and 0 <= head < self.heads):
                raise ValueError(f"head {layer}:{head} is not in this model ({self.layers} decoder layers x "
                                 f"{self.heads} heads, 0-based)")

    def add(self, clips: Sequence[ClipAttention]) -> None:
        """Score a batch of clips (their DTWs run together)."""
        index = {h: k for k, h in enumerate(all_heads(self.layers, self.heads))}
        stacks = []
        for clip in clips:
            _, _, rows, frames = clip.cross.shape
            hm = head_matrices(clip.cross.reshape(self.layers * self.heads, rows, frames), self.width)
            chosen = hm[[index[h] for h in self.chosen]].mean(axis=0)
            stacks.append(np.concatenate([hm, hm.mean(axis=0, keepdims=True), chosen[None]]))
        for clip, starts in zip(clips, set_row_starts(stacks), strict=True):
            self._count(clip, starts)

    def _count(self, clip: ClipAttention, starts: np.ndarray) -> None:
        firsts, gold = clip.firsts, clip.gold_starts
        times = [_token_times(s, clip.frame_s) for s in starts]
        errs = [errors_ms(t[firsts], gold) for t in times]
        for k, e in enumerate(errs[:-2]):
            self.per_head[k].add(e)
        self.mean_of_heads.add(errs[-2])
        mine, t = errs[-1], times[-1]
        self.reported.add(mine)
        for k, bands in enumerate(_bands(clip)):
            for group, band in bands.items():
                self.bands.add(group, band, [int(mine[k])])
        ends = [t[w.last + 1] if w.last + 1 < len(t) else t[-1] for w in clip.words]
        self.clips.append({
            "index": clip.index, "clip": clip.name, "duration_s": round(clip.duration_s, 3),
            "n_words": len(mine),
            "median_start_error_ms": float(np.median(mine)) if len(mine) else None,
            "mean_start_error_ms": round(float(mine.mean()), 3) if len(mine) else None,
            "max_start_error_ms": int(mine.max()) if len(mine) else None,
            "words": [{"word": g.word, "gold_start": g.start, "gold_end": g.end, "start": round(float(t[w.first]), 3),
                       "end": round(float(e), 3), "error_ms": int(x)}
                      for w, g, e, x in zip(clip.words, clip.gold.words, ends, mine, strict=True)],
            "path": [int(s) for s in starts[-1]],  # each token row's first frame on the reported set's path
        })


def choose_heads(clips: Sequence[ClipAttention], layers: int, heads: int, width: int = FILTER_WIDTH,
                 max_heads: int | None = None) -> tuple[list[Head], list[dict[str, Any]]]:
    """Greedy forward selection (module docstring) on `clips` -> (the chosen heads in the order added, the steps:
    each {"heads", "mean_start_error_ms", "median_start_error_ms"})."""
    if not clips:
        raise ValueError("no clip to choose the heads on")
    names = all_heads(layers, heads)
    mats = [head_matrices(c.cross.reshape(layers * heads, c.cross.shape[2], c.cross.shape[3]), width) for c in clips]
    sums = [np.zeros(m.shape[1:], dtype=np.float32) for m in mats]
    chosen: list[int] = []
    steps: list[dict[str, Any]] = []
    best = np.inf
    limit = len(names) if max_heads is None else min(max_heads, len(names))
    while len(chosen) < limit:
        candidates = [k for k in range(len(names)) if k not in chosen]
        stacks = [(s[None] + m[candidates]) / (len(chosen) + 1) for s, m in zip(sums, mats, strict=True)]
        totals = np.zeros(len(candidates))
        all_errs: list[list[np.ndarray]] = [[] for _ in candidates]
        for clip, starts in zip(clips, set_row_starts(stacks), strict=True):
            for c in range(len(candidates)):
                e = errors_ms(_token_times(starts[c], clip.frame_s)[clip.firsts], clip.gold_starts)
                totals[c] += e.sum()
                all_errs[c].append(e)
        n_words = sum(len(c.words) for c in clips)
        means = totals / max(n_words, 1)
        pick = int(np.argmin(means))
        if not means[pick] < best:
            break
        best = float(means[pick])
        chosen.append(candidates[pick])
        for s, m in zip(sums, mats, strict=True):
            s += m[candidates[pick]]
        errs = np.concatenate(all_errs[pick]) if all_errs[pick] else np.zeros(0)
        steps.append({"heads": [list(names[k]) for k in chosen], "mean_start_error_ms": round(best, 3),
                      "median_start_error_ms": float(np.median(errs)) if len(errs) else None})
    return [names[k] for k in chosen], steps
