"""Whisper's DTW word-timing recipe (model.analysis.timing.dtw) against transformers' own: the median filter,
the warping path, and the token times `generate(..., return_token_timestamps=True)` gives on a tiny Whisper."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from attention_lens.model.analysis.timing.dtw import dtw_path, dtw_row_starts, median_filter, row_starts, token_times
from transformers.models.whisper.generation_whisper import _dynamic_time_warping, _median_filter

from tests.fixtures.shaped_whisper import HEADS, features, shaped_whisper


def test_median_filter_equals_transformers():
    x = np.random.default_rng(0).standard_normal((3, 5, 40)).astype(np.float32)
    ours = median_filter(x, 7)
    theirs = _median_filter(torch.from_numpy(x), 7).numpy()
    np.testing.assert_array_equal(ours, theirs)
    short = x[..., :3]
    np.testing.assert_array_equal(median_filter(short, 7), _median_filter(torch.from_numpy(short), 7).numpy())


@pytest.mark.parametrize("seed", range(6))
def test_dtw_rows_equal_transformers_path(seed):
    rng = np.random.default_rng(seed)
    t, f = int(rng.integers(2, 12)), int(rng.integers(5, 60))
    m = rng.standard_normal((t, f))
    if seed % 2:  # ties: transformers breaks them by its order of comparisons
        m = np.round(m, 1)
    text, time = _dynamic_time_warping(-m)
    jumps = np.pad(np.diff(text), (1, 0), constant_values=1).astype(bool)
    np.testing.assert_array_equal(row_starts(m), time[jumps])
    rows, cols = dtw_path(m)
    np.testing.assert_array_equal(rows, text)
    np.testing.assert_array_equal(cols, time)


def test_batched_dtw_of_padded_matrices_equals_each_alone():
    rng = np.random.default_rng(1)
    mats = [rng.standard_normal((int(rng.integers(2, 9)), int(rng.integers(4, 30)))) for _ in range(5)]
    grid = np.full((5, 9, 30), 7.0)  # padding values must not reach any cell inside a matrix
    for k, m in enumerate(mats):
        grid[k, :m.shape[0], :m.shape[1]] = m
    starts = dtw_row_starts(grid, [m.shape for m in mats])
    for k, m in enumerate(mats):
        np.testing.assert_array_equal(starts[k, :m.shape[0]], row_starts(m))
        assert (starts[k, m.shape[0]:] == -1).all()


def test_a_matrix_without_spread_gives_transformers_minus_one_frame():
    from attention_lens.model.analysis.timing.dtw import head_matrices

    flat = np.full((1, 4, 10), 0.1, dtype=np.float32)  # uniform attention: normalising divides by zero
    m = head_matrices(flat).mean(axis=0)
    text, time = _dynamic_time_warping(-m.astype(np.float64))
    jumps = np.pad(np.diff(text), (1, 0), constant_values=1).astype(bool)
    np.testing.assert_array_equal(row_starts(m), time[jumps])
    assert (row_starts(m) == -1).all()


@pytest.mark.parametrize("seconds,seed", [(3.0, 0), pytest.param(5.2, 1, marks=pytest.mark.slow),
                                          pytest.param(8.0, 2, marks=pytest.mark.slow)])
def test_token_times_equal_generate_return_token_timestamps(seconds, seed):
    model, generation = shaped_whisper(seed)
    x, mask = features(seconds, seed)
    with torch.no_grad():
        out = model.generate(x, attention_mask=mask, generation_config=generation, return_token_timestamps=True,
                             output_attentions=True, return_dict_in_generate=True, max_new_tokens=16)
    theirs = out["token_timestamps"][0].numpy()
    assert np.isfinite(theirs).all() and (theirs >= 0).all() and theirs.max() > 0  # shaped: defined times
    prompt = 2  # start of transcript, no-timestamps
    layers = len(out["cross_attentions"][0])
    cross = np.stack([torch.cat([step[k] for step in out["cross_attentions"]], dim=2)[0].numpy()
                      for k in range(layers)])  # (L, H, rows, 1500)
    frames = int(mask.sum()) // 2
    ours = token_times(cross[:, :, prompt:, :frames], [tuple(h) for h in HEADS])
    assert ours.shape == theirs[prompt:].shape
    assert np.abs(ours - theirs[prompt:]).max() <= 0.02 + 1e-6
