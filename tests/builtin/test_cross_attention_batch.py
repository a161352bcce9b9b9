"""The attention-only teacher-forced pass (Engine.cross_attention_batch: fused self-attention, no logits) gives the
cross-attention of the full pass, sentence by sentence, cut to each sentence's own size."""

from __future__ import annotations

import numpy as np
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.contract import Engine

from tests.fixtures.checkpoints import SOURCES, TARGETS


def _batch(engine):
    srcs = [engine.encode_source(engine.normalise(s))[0] for s in SOURCES]
    labels = [engine.encode_target(engine.normalise_target(t)) for t in TARGETS]
    return srcs, labels


def test_attention_only_pass_equals_the_full_pass(tiny_engine):
    srcs, labels = _batch(tiny_engine)
    assert len({len(s) for s in srcs}) > 1  # padding inside the batch
    for causal, shift in ((True, True), (False, True), (True, False)):
        options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
        full = [run.cross_attn for run in tiny_engine.teacher_forced_batch(srcs, labels, options)]
        lean = tiny_engine.cross_attention_batch(srcs, labels, options)
        assert len(lean) == len(full)
        for a, b, s, lab in zip(full, lean, srcs, labels):
            assert b.shape == a.shape == (tiny_engine.n_decoder_layers, tiny_engine.n_heads, len(lab), len(s))
            assert b.dtype == np.float32
            np.testing.assert_allclose(b, a, atol=1e-5)


def test_an_ablated_or_bugged_pass_goes_through_the_full_pass(tiny_engine):
    srcs, labels = _batch(tiny_engine)
    for options in (DecodeOptions(mode="teacher_forced", ablate=("cross:1:1",)),
                    DecodeOptions(mode="teacher_forced", mask_after_softmax=True)):
        full = [run.cross_attn for run in tiny_engine.teacher_forced_batch(srcs, labels, options)]
        default = Engine.cross_attention_batch(tiny_engine, srcs, labels, options)  # the contract's own
        for a, b, c in zip(full, tiny_engine.cross_attention_batch(srcs, labels, options), default):
            np.testing.assert_allclose(b, a, atol=1e-5)
            np.testing.assert_array_equal(c, a)
