"""Whisper's word-timing recipe over cross-attention, as `transformers` computes it
(`WhisperGenerationMixin._extract_token_timestamps`, after openai/whisper's `timing.find_alignment`):

1. the chosen heads' cross-attention rows of the generated tokens, over the clip's encoder frames only;
2. each head normalised per frame over the token rows (zero mean, unit population standard deviation);
3. a median filter of odd width (the config's `median_filter_width`, 7) along the frames, the edges reflected
   without repeating the edge value (torch's "reflect", scipy's "mirror");
4. the heads averaged; dynamic time warping on the negative, from (0, 0) to (last token, last frame);
5. a token's time is the first frame at which the warping path enters its row, times 0.02 s.

Row r is the decoder position that READS generated token r (transformers drops the prompt's rows), so the first
generated token's time is always 0 and the last token, whose row is never computed during generation, repeats
the time before it. DTW is written once, with numpy, for a batch of matrices at once: cells on one anti-diagonal
depend only on the two before it, so a batch advances one anti-diagonal per step; a cell depends only on cells
above and to its left, so matrices of different sizes share one grid padded to the largest, each read back from
its own last cell. Costs are float32 and ties are broken exactly as transformers' loop breaks them (diagonal only
when strictly smaller than both, then up, else left), so the paths are the same.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.ndimage import median_filter as _scipy_median

FRAME_S = 0.02  # one encoder position: 2 mel frames of 10 ms (Whisper's conv stride 2)
FILTER_WIDTH = 7  # WhisperConfig.median_filter_width's default


def normalise(weights: np.ndarray) -> np.ndarray:
    """(..., T, F) -> (..., T, F) float32: each frame's column over the T token rows to zero mean and unit
    population standard deviation (a column with no spread becomes NaN, as in transformers)."""
    w = np.asarray(weights, dtype=np.float32)
    mean = w.mean(axis=-2, keepdims=True)
    std = w.std(axis=-2, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (w - mean) / std


def median_filter(weights: np.ndarray, width: int = FILTER_WIDTH) -> np.ndarray:
    """(..., F) -> (..., F): the median of `width` neighbours along the last axis, edges reflected about the edge
    sample (transformers' `_median_filter`: unchanged when F <= width // 2)."""
    if width <= 0 or width % 2 != 1:
        raise ValueError(f"the median filter width must be an odd number, not {width}")
    if weights.shape[-1] <= width // 2:
        return weights
    size = (1,) * (weights.ndim - 1) + (width,)
    return _scipy_median(weights, size=size, mode="mirror")


def head_matrices(cross: np.ndarray, width: int = FILTER_WIDTH) -> np.ndarray:
    """(H, T, F) cross-attention of H heads (token rows, clip frames) -> (H, T, F) float32, each head normalised
    and median-filtered: what the recipe averages over a head set."""
    return median_filter(normalise(cross), width)


def _steps(matrices: np.ndarray) -> np.ndarray:
    """(B, T, F) -> (B, T + 1, F + 1) int8: the step into each cell of the cheapest path on -matrix (0 diagonal,
    1 up, 2 left; row 0 left and column 0 up, as transformers' backtrace sets them)."""
    m = -np.asarray(matrices, dtype=np.float64)
    b, t_max, f_max = m.shape
    cost = np.full((b, t_max + 1, f_max + 1), np.inf, dtype=np.float32)
    step = np.full((b, t_max + 1, f_max + 1), -1, dtype=np.int8)
    cost[:, 0, 0] = 0
    for d in range(2, t_max + f_max + 1):  # one anti-diagonal i + j = d of cells at a time
        i = np.arange(max(1, d - f_max), min(t_max, d - 1) + 1)
        j = d - i
        c0, c1, c2 = cost[:, i - 1, j - 1], cost[:, i - 1, j], cost[:, i, j - 1]
        diag = (c0 < c1) & (c0 < c2)
        up = ~diag & (c1 < c0) & (c1 < c2)
        cost[:, i, j] = m[:, i - 1, j - 1] + np.where(diag, c0, np.where(up, c1, c2))  # float64 sum, stored float32
        step[:, i, j] = np.where(diag, 0, np.where(up, 1, 2))
    step[:, 0, :] = 2
    step[:, :, 0] = 1
    return step


def dtw_row_starts(matrices: np.ndarray, shapes: Sequence[tuple[int, int]] | None = None) -> np.ndarray:
    """Dynamic time warping on the NEGATIVE of each matrix (high weight = cheap), batched.

    matrices: (B, T, F); shapes: each matrix's own (T_b, F_b) in the top-left corner of the grid (default: all
    of it; the padding's values never reach a cell inside). Returns (B, T) int: for each row, the first column at
    which the path enters it (-1 where the path reaches column 0, as transformers' backtrace does for a matrix of
    NaNs; rows past T_b are -1 too)."""
    b, t_max, f_max = matrices.shape
    step = _steps(matrices)
    starts = np.full((b, t_max), -1, dtype=np.int64)
    rows = np.array([s[0] for s in shapes] if shapes is not None else [t_max] * b, dtype=np.int64)
    cols = np.array([s[1] for s in shapes] if shapes is not None else [f_max] * b, dtype=np.int64)
    batch = np.arange(b)
    while True:  # backtrace every path at once; a row's last write is its smallest column
        live = (rows > 0) | (cols > 0)
        if not live.any():
            break
        on_row = live & (rows > 0)
        starts[batch[on_row], rows[on_row] - 1] = cols[on_row] - 1
        s = step[batch, rows, cols]
        rows = np.where(live & (s != 2), rows - 1, rows)
        cols = np.where(live & (s != 1), cols - 1, cols)
    return starts


def row_starts(matrix: np.ndarray) -> np.ndarray:
    """(T, F) -> (T,) the column at which the DTW path on -matrix enters each row."""
    return dtw_row_starts(matrix[None])[0]


def dtw_path(matrix: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(T, F) -> (rows, columns) of the warping path on -matrix from (0, 0) to (T-1, F-1), in order (for drawing)."""
    step = _steps(matrix[None])[0]
    i, j = matrix.shape
    rows, cols = [], []
    while i > 0 or j > 0:
        rows.append(i - 1)
        cols.append(j - 1)
        s = step[i, j]
        i, j = (i - 1, j - 1) if s == 0 else (i - 1, j) if s == 1 else (i, j - 1)
    return np.array(rows[::-1], dtype=np.int64), np.array(cols[::-1], dtype=np.int64)


def token_times(cross: np.ndarray, heads: Sequence[tuple[int, int]], width: int = FILTER_WIDTH,
                frame_s: float = FRAME_S) -> np.ndarray:
    """The DTW time (s) of each generated token, transformers' `token_timestamps` without the prompt's zeros.

    cross: (L, H, R, F) cross-attention over the clip's F encoder frames; its R rows are the positions that
    read generated tokens 1..R (the prompt's rows left out). heads: (layer, head) pairs, 0-based.
    Returns (R + 1,): one time per row, then the last generated token's, a repeat of the one before."""
    if not heads:
        raise ValueError("token times need at least one (layer, head)")
    if cross.shape[-2] == 0:
        return np.zeros(1, dtype=np.float64)
    picked = np.stack([cross[layer, head] for layer, head in heads])  # (n, R, F)
    matrix = head_matrices(picked, width).mean(axis=0)
    times = row_starts(matrix) * frame_s
    return np.append(times, times[-1])
