"""Head ablation and contributions on our Transformer (the tiny random checkpoint and a shipped model)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.contributions import norm_weighted, rollout, source_share
from attention_lens.model.engine.heads import expand, keep_masks
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.runs import ContributionParts
from attention_lens.model.engine.tensors import pad_batch

from harness.models.tiny import SOURCES, TARGETS


def test_expand_names_every_head_once_in_order():
    assert expand(("cross:2:*", "enc:1:2", "cross:2:1"), 3, 3, 2) == ("enc:1:2", "cross:2:1", "cross:2:2")
    assert len(expand(("dec:*:*",), 3, 3, 4)) == 12
    with pytest.raises(ModelInputError):
        expand(("enc:4:1",), 3, 3, 4)
    with pytest.raises(ValueError):
        DecodeOptions(ablate=("encoder:1:1",))
    with pytest.raises(ValueError):
        DecodeOptions(ablate=("enc:0:1",))


def test_ablating_every_cross_head_makes_the_output_independent_of_the_source(tiny_engine):
    options = DecodeOptions(ablate=("cross:*:*",), max_len=12)
    a, b = (tiny_engine.trace(s, options=options) for s in (SOURCES[0], SOURCES[2]))
    assert a.source_tokens != b.source_tokens
    assert a.target_tokens == b.target_tokens
    assert [s.prob for s in a.steps] == [s.prob for s in b.steps]
    forced = DecodeOptions(mode="teacher_forced", ablate=("cross:*:*",))
    la, lb = (tiny_engine.trace(s, TARGETS[1], forced) for s in (SOURCES[0], SOURCES[2]))
    assert [s.top_k for s in la.steps] == [s.top_k for s in lb.steps]
    plain = [tiny_engine.trace(s, TARGETS[1], DecodeOptions(mode="teacher_forced")) for s in (SOURCES[0], SOURCES[2])]
    assert [s.top_k for s in plain[0].steps] != [s.top_k for s in plain[1].steps]


def test_ablating_one_head_changes_only_what_flows_through_it(tiny_engine):
    model, cfg = tiny_engine.model, tiny_engine.cfg
    src, keep_src = pad_batch([tiny_engine.encode_source(SOURCES[1])[0]], cfg.pad_id)
    labels = tiny_engine.encode_target(TARGETS[1])
    dec = torch.tensor([[cfg.bos_id, *labels[:-1]]])
    mask = decoder_self_mask(torch.ones_like(dec, dtype=torch.bool), True)
    with torch.no_grad():
        enc = model.encode(src, keep_src)
        base = model.decode(dec, enc, mask)
        masks = keep_masks(("enc:2:1", "dec:2:1"), tiny_engine.n_encoder_layers, tiny_engine.n_decoder_layers,
                           tiny_engine.n_heads)
        enc2 = model.encode(src, keep_src, keep=masks["enc"])
        off = model.decode(dec, enc, mask, keep=(masks["dec"], masks["cross"]))  # decoder head 2.1 only
    assert model.cfg.n_encoder_layers == model.cfg.n_decoder_layers == 2
    for first, second in ((enc, enc2), (base, off)):  # the inputs of layers 1 and 2 (layer 1's output): untouched
        assert torch.equal(first.inputs[0], second.inputs[0]) and torch.equal(first.inputs[1], second.inputs[1])
        assert torch.equal(first.attentions[1] if first is enc else first.self_attentions[1],
                           second.attentions[1] if second is enc2 else second.self_attentions[1])
    assert not torch.equal(enc.memory, enc2.memory)  # layer 2's output changed
    assert not torch.equal(base.logits, off.logits)


def test_no_ablation_computes_exactly_what_it_always_did(tiny_engine):
    plain = tiny_engine.trace(SOURCES[1], options=DecodeOptions(max_len=10))
    empty = tiny_engine.trace(SOURCES[1], options=DecodeOptions(max_len=10, ablate=()))
    assert plain.to_json() == empty.to_json()
    assert "ablate" not in plain.to_dict()["options"]
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        assert getattr(plain, kind).tobytes() == getattr(empty, kind).tobytes()


def test_norm_weighted_is_nonnegative_and_equals_the_weights_when_norms_are_equal():
    rng = np.random.default_rng(0)
    w = rng.random((2, 3, 4, 5))
    w /= w.sum(-1, keepdims=True)
    np.testing.assert_allclose(norm_weighted(w, np.full((2, 3, 5), 2.5)), w, rtol=0, atol=1e-12)
    assert (norm_weighted(w, rng.random((2, 3, 5))) >= 0).all()


@pytest.mark.parametrize("mode", ["greedy", "teacher_forced"])
def test_contributions_of_a_run_are_row_distributions_with_no_future_and_a_bounded_share(tiny_engine, mode):
    trace = tiny_engine.trace(SOURCES[2], TARGETS[2] if mode == "teacher_forced" else None,
                              DecodeOptions(mode=mode, contributions=True, max_len=10))
    c = trace.contributions
    m = trace.m
    future = ~np.tril(np.ones((m, m), dtype=bool))
    for group in ("norm_weighted", "rollout"):
        for kind, arr in c[group].items():
            assert (arr >= 0).all(), (group, kind)
            np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
        assert (c[group]["decoder_self_attention"][..., future] == 0).all()  # causal: no future contribution
    assert c["source_share"].shape == (m,)
    assert ((c["source_share"] >= 0) & (c["source_share"] <= 1)).all()


def _reference_norm_weighted(engine, trace) -> dict[str, np.ndarray]:
    """Norm-weighted attention by the plain formula, from the model's weights: alpha_ij ||v_j W_O^h|| with rows
    renormalised, where v_j is the value vector the model computed for key j (captured by forward hooks on the
    value projections in one uncached pass, in this test only) and W_O^h head h's columns of the output
    projection. Nothing of the engine's own contribution code is used."""
    model = engine.model
    attentions = {"encoder_self_attention": [la.self_attn for la in model.encoder],
                  "decoder_self_attention": [la.self_attn for la in model.decoder],
                  "cross_attention": [la.cross_attn for la in model.decoder]}
    values, hooks = {}, []
    for kind, modules in attentions.items():
        for i, attn in enumerate(modules):
            hooks.append(attn.w_v.register_forward_hook(
                lambda _m, _i, out, key=(kind, i): values.__setitem__(key, out[0].detach().double())))
    src = torch.tensor([engine.encode_source(trace.normalised_source)[0]])
    dec = torch.tensor([[engine.piece_to_id(p) for p in trace.decoder_input_tokens]])
    try:
        with torch.no_grad():
            enc = model.encode(src, torch.ones_like(src, dtype=torch.bool))
            model.decode(dec, enc, decoder_self_mask(torch.ones_like(dec, dtype=torch.bool), True))
    finally:
        for hook in hooks:
            hook.remove()
    h = engine.n_heads
    out = {}
    for kind, modules in attentions.items():
        layers = []
        for i, attn in enumerate(modules):
            v, w_o = values[(kind, i)], attn.w_o.weight.detach().double()  # (keys, d_model), (d_model, d_model)
            d_k = v.shape[-1] // h
            norms = torch.stack([(v[:, j * d_k:(j + 1) * d_k] @ w_o[:, j * d_k:(j + 1) * d_k].T).norm(dim=-1)
                                 for j in range(h)]).numpy()  # (h, keys)
            weighted = getattr(trace, kind)[i].astype(np.float64) * norms[:, None, :]
            layers.append(weighted / weighted.sum(-1, keepdims=True))
        out[kind] = np.stack(layers)
    return out


@pytest.mark.parametrize("mode", ["greedy", "teacher_forced"])
def test_norm_weighted_equals_the_plain_formula_from_the_weights(tiny_engine, mode):
    trace = tiny_engine.trace(SOURCES[2], TARGETS[2] if mode == "teacher_forced" else None,
                              DecodeOptions(mode=mode, contributions=True, max_len=10))
    for kind, expected in _reference_norm_weighted(tiny_engine, trace).items():
        got = trace.contributions["norm_weighted"][kind]
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5, err_msg=kind)


def test_source_share_bounds_in_constructed_cases():
    m, n, layers, h = 3, 4, 2, 2
    dec = np.broadcast_to(np.tril(np.ones((m, m))) / np.arange(1, m + 1)[:, None], (layers, h, m, m))
    cross = np.full((layers, h, m, n), 1 / n)
    parts = ContributionParts({"decoder_self_attention": np.ones((layers, h, m)),
                               "cross_attention": np.zeros((layers, h, n))}, np.ones((layers, m)))
    assert (source_share(cross, dec, parts) == 0).all()  # nothing sent from the source: all prefix
    parts.value_norms["cross_attention"] = np.full((layers, h, n), 1e9)
    np.testing.assert_allclose(source_share(cross, dec, parts), 1.0, atol=1e-6)  # the source swamps the rest


def test_rollout_of_identity_attention_is_identity():
    eye = np.broadcast_to(np.eye(4), (3, 2, 4, 4))
    per_head, through = rollout(eye)
    np.testing.assert_allclose(through, np.eye(4))
    np.testing.assert_allclose(per_head, eye)


def test_ablated_trace_lists_its_heads_and_the_model_is_unchanged(tiny_engine):
    before = {k: v.clone() for k, v in tiny_engine.model.state_dict().items()}
    trace = tiny_engine.trace(SOURCES[0], options=DecodeOptions(ablate=("enc:1:*", "cross:2:1"), max_len=6))
    assert trace.options.ablate[-1] == "cross:2:1" and len(trace.options.ablate) == tiny_engine.n_heads + 1
    assert all(torch.equal(before[k], v) for k, v in tiny_engine.model.state_dict().items())


@pytest.mark.parametrize("ablate", [(), ("dec:1:2", "cross:2:*")])
def test_contributions_reusing_the_batch_encoding_equal_a_full_replay(tiny_engine, ablate):
    options = DecodeOptions(contributions=True, max_len=10, ablate=ablate)
    src = tiny_engine.encode_source(SOURCES[3])[0]
    run = tiny_engine.decode_batch([tiny_engine.encode_source(SOURCES[1])[0], src], options)[1]
    reused = run.extra["parts"]
    replayed = tiny_engine.contribution_parts(run, options)
    for kind, norms in replayed.value_norms.items():
        np.testing.assert_allclose(reused.value_norms[kind], norms, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(reused.residual_norms, replayed.residual_norms, rtol=1e-5, atol=1e-5)


def test_teacher_forced_batch_parts_equal_a_replay(tiny_engine):
    options = DecodeOptions(mode="teacher_forced", contributions=True, ablate=("enc:2:1",))
    srcs = [tiny_engine.encode_source(s)[0] for s in (SOURCES[1], SOURCES[0])]  # padded: different lengths
    labels = [tiny_engine.encode_target(t) for t in (TARGETS[1], TARGETS[0])]
    for run in tiny_engine.teacher_forced_batch(srcs, labels, options):
        replayed = tiny_engine.contribution_parts(run, options)
        for kind, norms in replayed.value_norms.items():
            np.testing.assert_allclose(run.extra["parts"].value_norms[kind], norms, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(run.extra["parts"].residual_norms, replayed.residual_norms, rtol=1e-5, atol=1e-5)
