"""The three bug switches of model.engine.bugs on the tiny checkpoint: each computes what its bug computes, the
loaded model is unchanged, the healthy run is untouched, and a family that cannot express a switch says so."""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.model.analysis.bug_meters import row_entropy, row_sums, sharpness, swap_meter
from attention_lens.model.engine import DecodeOptions, ModelInputError

from harness.models import hf_tiny

SOURCE = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."


def tf(**switches) -> DecodeOptions:
    return DecodeOptions(mode="teacher_forced", **switches)


def test_mask_after_softmax_leaves_rows_short_of_one_and_zero_only_where_masked(tiny_engine):
    healthy = tiny_engine.trace(SOURCE, TARGET, tf())
    bug = tiny_engine.trace(SOURCE, TARGET, tf(mask_after_softmax=True))
    meter = row_sums(bug)
    m = bug.m
    # Every row but the last has later keys that were masked: their share is gone, not renormalised.
    assert (meter.sums[..., : m - 1] < 1 - 1e-3).all()
    np.testing.assert_allclose(meter.sums[..., m - 1], 1.0, atol=1e-6)  # the last row masks nothing
    assert meter.max_future == 0.0  # the masked weights are exactly 0
    np.testing.assert_allclose(row_sums(healthy).sums, 1.0, atol=1e-6)
    # Where no mask was applied (the encoder, the cross-attention of one unpadded sentence) rows still sum to 1.
    np.testing.assert_allclose(bug.encoder_self_attention.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(bug.cross_attention.sum(-1), 1.0, atol=1e-6)
    # The surviving weights are the healthy softmax over every key: in layer 1 (same inputs) the first row keeps
    # only its own weight, which is below the healthy 1.
    assert meter.sums[0, :, 0].max() < 1.0 and np.allclose(healthy.decoder_self_attention[0, :, 0, 0], 1.0)
    # With the causal mask off there is nothing to mask: the future carries weight and rows sum to 1.
    open_bug = row_sums(tiny_engine.trace(SOURCE, TARGET, tf(causal=False, mask_after_softmax=True)))
    assert open_bug.max_future > 0.01
    np.testing.assert_allclose(open_bug.sums, 1.0, atol=1e-6)
    assert bug.to_dict()["options"]["mask_after_softmax"] is True
    assert "mask_after_softmax" not in healthy.to_dict()["options"]


def equal_length_target(engine, source: str) -> str:
    """A target of as many tokens as the source: 'le' repeated (one piece each in the tiny vocabulary), then the
    full stop and the end token that normalisation and encoding add."""
    n = len(engine.prepare_source(source)[1])
    target = " ".join(["le"] * (n - 2))
    assert len(engine.prepare_target(target)[0]) == n
    return target


def test_swapped_cross_attention_fails_on_unequal_lengths_and_runs_on_equal_ones(tiny_engine):
    n = len(tiny_engine.prepare_source(SOURCE)[1])
    m = len(tiny_engine.prepare_target(TARGET)[0])
    assert n != m
    with pytest.raises(ModelInputError, match=rf"queries are the {n} source positions.*decoder's {m} rows"):
        tiny_engine.trace(SOURCE, TARGET, tf(swap_cross=True))
    target = equal_length_target(tiny_engine, SOURCE)
    healthy = tiny_engine.trace(SOURCE, target, tf())
    bug = tiny_engine.trace(SOURCE, target, tf(swap_cross=True))
    assert bug.cross_attention.shape == healthy.cross_attention.shape == (2, 4, n, n)
    np.testing.assert_allclose(bug.cross_attention.sum(-1), 1.0, atol=1e-6)
    assert np.abs(bug.cross_attention - healthy.cross_attention).max() > 0.05
    # The self-attention of the first decoder layer comes before the swap: unchanged.
    np.testing.assert_array_equal(bug.decoder_self_attention[0], healthy.decoder_self_attention[0])
    meter = swap_meter(bug)
    assert meter.future.shape == (2, 4, n) and meter.max_future > 0.01  # source rows read later target tokens
    np.testing.assert_allclose(meter.future[..., -1], 0.0)  # the last row has no later position
    # Free-running decoding adds one row per step: the swap cannot even start on a source of several tokens.
    with pytest.raises(ModelInputError, match="swapped"):
        tiny_engine.trace(SOURCE, options=DecodeOptions(swap_cross=True))


def test_without_scaling_rows_are_sharper_than_healthy(tiny_engine):
    healthy = sharpness(tiny_engine.trace(SOURCE, TARGET, tf()))
    unscaled_trace = tiny_engine.trace(SOURCE, TARGET, tf(unscaled=True))
    bug = sharpness(unscaled_trace)
    for kind in healthy.entropy:
        assert bug.entropy[kind] < healthy.entropy[kind], kind
        assert bug.top_weight[kind] > healthy.top_weight[kind], kind
    np.testing.assert_allclose(unscaled_trace.encoder_self_attention.sum(-1), 1.0, atol=1e-5)
    # Free running computes the same unscaled rows step by step (the cache is not affected by the switch).
    free = tiny_engine.trace(SOURCE, options=DecodeOptions(unscaled=True, max_len=6))
    np.testing.assert_allclose(free.encoder_self_attention, unscaled_trace.encoder_self_attention, atol=1e-6)


def test_row_entropy_by_hand():
    rows = np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    np.testing.assert_allclose(row_entropy(rows), [np.log(2), 0.0])


def test_the_loaded_model_is_unchanged_by_the_switches(tiny_engine):
    before = {k: v.clone() for k, v in tiny_engine.model.state_dict().items()}
    plain = tiny_engine.trace(SOURCE, TARGET, tf())
    for switch in ("mask_after_softmax", "unscaled"):
        tiny_engine.trace(SOURCE, TARGET, tf(**{switch: True}))
    again = tiny_engine.trace(SOURCE, TARGET, tf())
    np.testing.assert_array_equal(plain.decoder_self_attention, again.decoder_self_attention)
    assert all(torch_equal(before[k], v) for k, v in tiny_engine.model.state_dict().items())


def torch_equal(a, b) -> bool:
    return bool((a == b).all())


def test_hugging_face_refuses_the_bug_switches_with_a_reason(tmp_path):
    from attention_lens.model.engine.loader import load_engine

    engine = load_engine(hf_tiny.build_marian(tmp_path / "marian"))
    assert engine.bug_switches == frozenset()
    for switch in ("mask_after_softmax", "swap_cross", "unscaled"):
        with pytest.raises(ModelInputError, match="Not possible for this model family"):
            engine.trace("the cat sat .", "le chat .", tf(**{switch: True}))
        with pytest.raises(ModelInputError, match="Not possible for this model family"):
            engine.trace("the cat sat .", options=DecodeOptions(**{switch: True}, max_len=3))


def test_equal_length_target_matches_the_source_token_count(tiny_engine):
    from attention_lens.model.analysis.bug_meters import equal_length_target as cut

    text = cut(tiny_engine, SOURCE, TARGET)
    n = len(tiny_engine.prepare_source(SOURCE)[1])
    assert len(tiny_engine.prepare_target(text)[0]) == n
    assert set(text.split()) <= set(TARGET.split())
    tiny_engine.trace(SOURCE, text, tf(swap_cross=True))  # and the swap runs on it
