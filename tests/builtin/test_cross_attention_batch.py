"""The attention-only teacher-forced pass (Engine.cross_attention_batch: fused self-attention, no logits) gives the
cross-attention of the full pass, sentence by sentence, cut to each sentence's own size."""

from __future__ import annotations

import numpy as np
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.contract import Engine

from harness.models.tiny import SOURCES, TARGETS


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


def test_the_pass_that_stops_at_the_last_cross_weights_gives_the_whole_decoders_weights_exactly(tiny_engine):
    """Transformer.cross_attentions leaves out the last layer's values, output projection and feed-forward: the
    weights are bit for bit those of the whole decoder (decode without self weights or logits), head masks too."""
    import torch
    from attention_lens.model.builtin.batch import padded_pairs
    from attention_lens.model.engine.masks import decoder_self_mask

    model = tiny_engine.model
    srcs, labels = _batch(tiny_engine)
    layers, heads = tiny_engine.n_decoder_layers, tiny_engine.n_heads
    masks = torch.ones(layers, heads)
    masks[-1, 0] = 0.0  # the last layer's first self-attention head off: it changes what that layer's cross reads
    for causal, shift, keep in ((True, True, (None, None)), (False, True, (None, None)), (True, False, (masks, masks))):
        src, src_keep, dec_in, tgt_keep = padded_pairs(model, srcs, labels, shift)
        with torch.no_grad():
            enc = model.encode(src, src_keep, need_weights=False)
            self_mask = decoder_self_mask(tgt_keep, causal)
            whole = model.decode(dec_in, enc, self_mask, need_weights=True, keep=keep, need_self_weights=False,
                                 logits=False).cross_attentions
            lean = model.cross_attentions(dec_in, enc, self_mask, keep)
        assert len(lean) == len(whole) == layers
        for a, b in zip(whole, lean):
            assert torch.equal(a, b)
    if keep[0] is not None:
        assert not torch.equal(lean[-1], model.cross_attentions(dec_in, enc, self_mask)[-1])
