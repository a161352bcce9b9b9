"""The Hugging Face teacher-forced batch is one padded pass (it was one pass per pair) and honours need_weights
(attention was always returned): each pair's logits, attention and contribution parts equal those of the model
run on that pair alone, without padding (Hugging Face's own call, written out here)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.hf.engine import HFEngine

from harness.models import hf_tiny

SOURCES, TARGETS = hf_tiny.UNEVEN_SOURCES, hf_tiny.UNEVEN_TARGETS


@pytest.fixture
def engine(hf_engine) -> HFEngine:
    """Each tiny family's engine (tests/hf/conftest.py)."""
    return hf_engine


def pairs(engine: HFEngine) -> tuple[list[list[int]], list[list[int]]]:
    srcs = [engine.encode_source(s)[0] for s in SOURCES]
    labels = [engine.encode_target(t) for t in TARGETS]
    assert len({len(s) for s in srcs}) > 1 and len({len(lab) for lab in labels}) > 1  # padding really happens
    return srcs, labels


@torch.no_grad()
def alone(engine: HFEngine, src: list[int], labels: list[int], causal: bool):
    """The model on one pair, no padding: the shifted labels read, a zero additive mask for causal off."""
    dec = torch.tensor([[engine.start_id, *labels[:-1]]])
    extra = {} if causal else {"decoder_attention_mask": torch.zeros(1, 1, dec.shape[1], dec.shape[1])}
    return engine.model(input_ids=torch.tensor([src]), attention_mask=torch.ones(1, len(src), dtype=torch.long),
                        decoder_input_ids=dec, output_attentions=True, use_cache=False, **extra)


@pytest.mark.parametrize("causal", [True, False])
def test_the_batch_equals_each_pair_alone(engine, causal):
    srcs, labels = pairs(engine)
    runs = engine.teacher_forced_batch(srcs, labels, DecodeOptions(mode="teacher_forced", causal=causal))
    for run, src, labs in zip(runs, srcs, labels):
        out = alone(engine, src, labs, causal)
        np.testing.assert_allclose(run.logits, out.logits[0].numpy(), atol=1e-4)
        for mine, theirs in ((run.enc_attn, out.encoder_attentions), (run.dec_attn, out.decoder_attentions),
                             (run.cross_attn, out.cross_attentions)):
            np.testing.assert_allclose(mine, torch.stack([a[0] for a in theirs]).numpy(), atol=1e-5)


def test_the_batch_is_one_forward_pass(engine):
    srcs, labels = pairs(engine)
    calls = []
    handle = engine.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        engine.teacher_forced_batch(srcs, labels, DecodeOptions(mode="teacher_forced"))
    finally:
        handle.remove()
    assert len(calls) == 1


def test_need_weights_false_returns_logits_only(engine):
    srcs, labels = pairs(engine)
    options = DecodeOptions(mode="teacher_forced")
    light = engine.teacher_forced_batch(srcs, labels, options, need_weights=False)
    full = engine.teacher_forced_batch(srcs, labels, options)
    for a, b in zip(light, full):
        assert a.enc_attn.size == a.dec_attn.size == a.cross_attn.size == 0
        np.testing.assert_array_equal(a.logits, b.logits)


def test_contribution_parts_from_the_batch_equal_a_replay_of_each_pair(engine):
    srcs, labels = pairs(engine)
    options = DecodeOptions(mode="teacher_forced", contributions=True, ablate=("cross:1:1",))
    for run in engine.teacher_forced_batch(srcs, labels, options):
        replay = engine.contribution_parts(run, options)
        for kind, norms in replay.value_norms.items():
            np.testing.assert_allclose(run.extra["parts"].value_norms[kind], norms, atol=1e-4)
        np.testing.assert_allclose(run.extra["parts"].residual_norms, replay.residual_norms, atol=1e-4)
