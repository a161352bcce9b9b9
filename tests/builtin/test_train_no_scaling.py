"""`train --variant no-scaling` on a tiny model for a few steps: the checkpoint says scaled: false and runs
unscaled, exactly as the healthy architecture does with the `unscaled` switch of a run."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import torch
from attention_lens.model.builtin.attention import MultiHeadAttention
from attention_lens.model.builtin.checkpoint import load_checkpoint
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.corpora import generate
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.training.train import TrainConfig, train

TINY = dict(architecture=dict(d_model=32, n_heads=2, n_encoder_layers=1, n_decoder_layers=1, d_ff=64), vocab_size=300,
            eval_every=4, em_sample=8, dtype="float32")


def test_no_scaling_variant_trains_and_runs_unscaled(tmp_path):
    splits = generate("en-fr", n_train=120, n_valid=16, n_test=16, n_combo=4)
    rows = {name: [(e.source, e.target) for e in examples] for name, examples in splits.items()}
    card = train(rows, tmp_path / "ns", TrainConfig(variant="no-scaling", steps=4, **TINY),
                 {"pair": "en-fr", "data": "tiny.tsv"}, progress=False)
    assert card["variant"] == "no-scaling" and card["trained_causal"] and card["trained_shift"]
    assert json.loads((tmp_path / "ns" / "config.json").read_text())["scaled"] is False
    ckpt = load_checkpoint(tmp_path / "ns")
    unscaled = BuiltinEngine(ckpt)
    # The same weights in the healthy architecture, with the run's unscaled switch on, compute the same trace.
    healthy_arch = Transformer(replace(ckpt.config, scaled=True)).eval()
    healthy_arch.load_state_dict(ckpt.model.state_dict())
    ckpt.model = healthy_arch
    switched = BuiltinEngine(ckpt)
    a = unscaled.trace("the cat sat .", "le chat s' assit .", DecodeOptions(mode="teacher_forced"))
    b = switched.trace("the cat sat .", "le chat s' assit .", DecodeOptions(mode="teacher_forced", unscaled=True))
    c = switched.trace("the cat sat .", "le chat s' assit .", DecodeOptions(mode="teacher_forced"))
    np.testing.assert_allclose(a.encoder_self_attention, b.encoder_self_attention, atol=1e-6)
    np.testing.assert_allclose(a.cross_attention, b.cross_attention, atol=1e-6)
    assert np.abs(a.encoder_self_attention - c.encoder_self_attention).max() > 1e-3


def test_the_fused_kernel_leaves_the_scaling_out_too():
    """Training runs attention without weights (PyTorch's fused kernel): unscaled there as in the traced path."""
    torch.manual_seed(0)
    mha = MultiHeadAttention(16, 2, scaled=False)
    x = torch.randn(1, 5, 16)
    k, v = mha.project_kv(x)
    traced, _ = mha(x, k, v, None, need_weights=True)
    fused, _ = mha(x, k, v, None, need_weights=False)
    torch.testing.assert_close(traced, fused, rtol=1e-5, atol=1e-5)
    healthy = MultiHeadAttention(16, 2)
    healthy.load_state_dict(mha.state_dict())
    assert (healthy(x, k, v, None, need_weights=False)[0] - fused).abs().max() > 1e-3
