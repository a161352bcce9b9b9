"""The adapter's contributions equal a reference computed from the model's own modules (the value and output
projections, read while the model runs) for tiny Marian, T5 and BART; head ablation is refused plainly."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from model.analysis.contributions import renormalise
from model.engine import DecodeOptions, ModelInputError
from model.engine.loader import load_engine
from tests.fixtures import hf_tiny

SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."
BUILD = {"marian": hf_tiny.build_marian, "t5": hf_tiny.build_t5, "bart": hf_tiny.build_bart}


@pytest.fixture(scope="module", params=sorted(BUILD))
def engine(request, tmp_path_factory):
    return load_engine(BUILD[request.param](tmp_path_factory.mktemp(request.param) / request.param))


def _projections(model):
    """kind -> per layer (value module, output module, heads), found by the family's own module names."""
    if model.config.model_type == "t5":
        enc, dec = model.encoder.block, model.decoder.block
        return {"encoder_self_attention": [(b.layer[0].SelfAttention.v, b.layer[0].SelfAttention.o) for b in enc],
                "decoder_self_attention": [(b.layer[0].SelfAttention.v, b.layer[0].SelfAttention.o) for b in dec],
                "cross_attention": [(b.layer[1].EncDecAttention.v, b.layer[1].EncDecAttention.o) for b in dec]}
    enc, dec = model.model.encoder.layers, model.model.decoder.layers
    return {"encoder_self_attention": [(la.self_attn.v_proj, la.self_attn.out_proj) for la in enc],
            "decoder_self_attention": [(la.self_attn.v_proj, la.self_attn.out_proj) for la in dec],
            "cross_attention": [(la.encoder_attn.v_proj, la.encoder_attn.out_proj) for la in dec]}


def _reference(engine, trace):
    """Norm-weighted attention from the values the model itself computed (forward hooks on the value
    projections, in the test only) and its output projection weights, head by head."""
    model, h = engine.model, engine.n_heads
    values, handles = {}, []
    for kind, layers in _projections(model).items():
        for i, (v_mod, _) in enumerate(layers):
            handles.append(v_mod.register_forward_hook(
                lambda _m, _i, out, key=(kind, i): values.__setitem__(key, out[0].detach())))
    src_ids, _ = engine.encode_source(trace.options["normalised_source"])
    dec_ids = [engine.piece_to_id(p) for p in trace.decoder_input_tokens]
    try:
        with torch.no_grad():
            out = model(input_ids=torch.tensor([src_ids]), decoder_input_ids=torch.tensor([dec_ids]),
                        output_attentions=True, use_cache=False)
    finally:
        for handle in handles:
            handle.remove()
    attn = {"encoder_self_attention": out.encoder_attentions, "decoder_self_attention": out.decoder_attentions,
            "cross_attention": out.cross_attentions}
    ref = {}
    for kind, layers in _projections(model).items():
        per_layer = []
        for i, (_, o_mod) in enumerate(layers):
            v = values[(kind, i)]  # (keys, h * d_k)
            d_k = v.shape[-1] // h
            norms = torch.stack([(v[:, j * d_k:(j + 1) * d_k] @ o_mod.weight[:, j * d_k:(j + 1) * d_k].T).norm(dim=-1)
                                 for j in range(h)])  # (h, keys)
            per_layer.append((attn[kind][i][0] * norms[:, None, :]).numpy())
        ref[kind] = renormalise(np.stack(per_layer))
    return ref


@pytest.mark.parametrize("teacher", [True, False])
def test_contributions_equal_the_reference_from_the_modules(engine, teacher):
    options = DecodeOptions(contributions=True, max_len=10)
    trace = engine.trace(SOURCE, TARGET if teacher else None, options)
    ref = _reference(engine, trace)
    for kind, expected in ref.items():
        got = trace.contributions["norm_weighted"][kind]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5, err_msg=kind)
    share = trace.contributions["source_share"]
    assert ((share >= 0) & (share <= 1)).all()


def test_ablation_is_refused_plainly(engine):
    with pytest.raises(ModelInputError, match="head_mask"):
        engine.trace(SOURCE, options=DecodeOptions(ablate=("cross:1:1",), max_len=4))
