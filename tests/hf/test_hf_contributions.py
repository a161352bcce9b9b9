"""The adapter's contributions equal a reference computed from the model's own modules (the value and output
projections, read while the model runs) for tiny Marian, T5 and BART. Head ablation (model.hf.ablation): no heads
off computes bit for bit a plain run (and what a model without the hooks computes); every cross head off makes
the output independent of the source; one head off leaves the layers below it untouched and changes what
follows; the result equals a copy of the model whose W_O columns of those heads are zero (logits, tokens,
contributions); one thread's ablated run leaves another's concurrent plain run plain, and the model unchanged."""

from __future__ import annotations

import copy
import threading

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.contributions import renormalise
from attention_lens.model.engine.heads import KIND_CODES
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.hf import ablation
from attention_lens.model.hf.engine import HFEngine
from attention_lens.model.hf.load import load_folder

from harness.models import hf_tiny

SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."
OTHER = "the man found the bank near the river ."
SHORT = 10  # decoding steps: random weights rarely stop on their own
BUILD = {"marian": hf_tiny.build_marian, "t5": hf_tiny.build_t5, "bart": hf_tiny.build_bart}


@pytest.fixture(scope="module", params=sorted(BUILD))
def folder(request, tmp_path_factory):
    return BUILD[request.param](tmp_path_factory.mktemp(request.param) / request.param)


@pytest.fixture(scope="module")
def engine(folder):
    return load_engine(folder)


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


def _reference(engine, trace, model=None):
    """Norm-weighted attention from the values the model itself computed (forward hooks on the value
    projections, in the test only) and its output projection weights, head by head (model: another model
    with the engine's tokenizer, e.g. a copy with heads zeroed; default the engine's own)."""
    model, h = model if model is not None else engine.model, engine.n_heads
    values, handles = {}, []
    for kind, layers in _projections(model).items():
        for i, (v_mod, _) in enumerate(layers):
            handles.append(v_mod.register_forward_hook(
                lambda _m, _i, out, key=(kind, i): values.__setitem__(key, out[0].detach())))
    src_ids, _ = engine.encode_source(trace.normalised_source)
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


# ---- head ablation ---------------------------------------------------------------------------------------------
def _forced(engine, source, ablate=()):
    """The raw teacher-forced run (logits and attention) of source with TARGET, those heads off."""
    options = DecodeOptions(mode="teacher_forced", ablate=ablate)
    return engine.teacher_forced_batch([engine.encode_source(source)[0]], [engine.encode_target(TARGET)], options)[0]


def _arrays(run) -> dict[str, np.ndarray]:
    return {k: getattr(run, k) for k in ("logits", "enc_attn", "dec_attn", "cross_attn")}


def _zeroed_copy(engine, heads):
    """A deep copy of the model with the W_O columns of each head in `heads` ("kind:layer:head") set to zero:
    the by-hand reference of switching those heads off."""
    model = copy.deepcopy(engine.model)
    sites = _projections(model)
    for name in heads:
        kind, layer, head = name.split(":")
        o_proj = sites[KIND_CODES[kind]][int(layer) - 1][1]
        d_k = o_proj.weight.shape[1] // engine.n_heads
        with torch.no_grad():
            o_proj.weight[:, (int(head) - 1) * d_k:int(head) * d_k] = 0.0
    return model


def test_no_heads_off_computes_exactly_a_plain_run(engine, folder):
    plain = engine.trace(SOURCE, options=DecodeOptions(max_len=SHORT))
    empty = engine.trace(SOURCE, options=DecodeOptions(max_len=SHORT, ablate=()))
    assert plain.to_json() == empty.to_json()
    assert "ablate" not in plain.to_dict()["options"]
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        assert getattr(plain, kind).tobytes() == getattr(empty, kind).tobytes()
    # The dormant hooks are a pass-through: the same model loaded afresh, without them, computes the same bits.
    fresh = load_folder(folder)[0]
    assert not getattr(fresh, ablation.MARK, False)
    with pytest.raises(ModelInputError, match="no head-off hooks"):  # no hooks: heads off would silently do nothing
        ablation.plan_of(fresh, engine.head_masks(DecodeOptions(ablate=("enc:1:1",))))
    src, labels = engine.encode_source(SOURCE)[0], engine.encode_target(TARGET)
    with torch.no_grad():
        out = fresh(input_ids=torch.tensor([src]), attention_mask=torch.ones(1, len(src), dtype=torch.long),
                    decoder_input_ids=torch.tensor([[engine.start_id, *labels[:-1]]]), output_attentions=True,
                    use_cache=False)
    run = _forced(engine, SOURCE)
    assert run.logits.tobytes() == out.logits[0].numpy().tobytes()
    for key, attentions in (("enc_attn", out.encoder_attentions), ("dec_attn", out.decoder_attentions),
                            ("cross_attn", out.cross_attentions)):
        assert getattr(run, key).tobytes() == np.stack([a[0].numpy() for a in attentions]).tobytes(), key
    # A head mask with every head on wakes nothing either.
    layers = {"enc": engine.n_encoder_layers, "dec": engine.n_decoder_layers, "cross": engine.n_decoder_layers}
    ones = {code: torch.ones(n, engine.n_heads) for code, n in layers.items()}
    with ablation.ablating(engine.model, ones):
        assert not ablation.active()


def test_every_cross_head_off_makes_the_output_independent_of_the_source(engine):
    off = ("cross:*:*",)
    assert engine.encode_source(SOURCE)[0] != engine.encode_source(OTHER)[0]
    a, b = (_forced(engine, s, off) for s in (SOURCE, OTHER))
    assert np.array_equal(a.logits, b.logits)
    assert np.array_equal(a.dec_attn, b.dec_attn)
    assert not np.array_equal(*(_forced(engine, s).logits for s in (SOURCE, OTHER)))  # plain: the source matters
    for mode in ("greedy", "beam"):
        options = DecodeOptions(mode=mode, beam_size=2, ablate=off, max_len=SHORT)
        ga, gb = (engine.trace(s, options=options) for s in (SOURCE, OTHER))
        assert ga.source_tokens != gb.source_tokens
        assert ga.target_tokens == gb.target_tokens, mode
        assert [s.prob for s in ga.steps] == [s.prob for s in gb.steps], mode
        assert [s.top_k for s in ga.steps] == [s.top_k for s in gb.steps], mode


@pytest.mark.parametrize("side", ["enc", "dec"])
def test_one_head_off_changes_only_what_flows_through_it(engine, side):
    name = f"{side}:2:1"
    plain, off = _forced(engine, SOURCE), _forced(engine, SOURCE, (name,))
    attn = "enc_attn" if side == "enc" else "dec_attn"
    assert engine.n_encoder_layers == engine.n_decoder_layers == 2
    # Its layer's weights are computed before W_O, the layer below it never sees it: both stay bit for bit.
    assert getattr(plain, attn).tobytes() == getattr(off, attn).tobytes()
    if side == "dec":
        assert plain.enc_attn.tobytes() == off.enc_attn.tobytes()  # the encoder does not depend on the decoder
    assert not np.array_equal(plain.logits, off.logits)
    src, labels = engine.encode_source(SOURCE)[0], engine.encode_target(TARGET)
    kwargs = dict(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([[engine.start_id, *labels[:-1]]]),
                  output_hidden_states=True, use_cache=False)
    with torch.no_grad():
        before = engine.model(**kwargs)
        with ablation.ablating(engine.model, engine.head_masks(DecodeOptions(ablate=(name,)))):
            assert ablation.active()
            after = engine.model(**kwargs)
    assert not ablation.active()
    states = "encoder_hidden_states" if side == "enc" else "decoder_hidden_states"
    b, a = getattr(before, states), getattr(after, states)
    assert torch.equal(b[0], a[0]) and torch.equal(b[1], a[1])  # the inputs of layers 1 and 2: untouched
    assert not torch.equal(b[2], a[2])  # layer 2's output changed


HEADS = ("enc:1:2", "dec:2:3", "cross:1:1", "cross:2:*")


@pytest.mark.parametrize("teacher", [True, False])
def test_ablation_equals_zeroed_output_projection_columns(engine, teacher):
    heads = ("enc:1:2", "dec:2:3", "cross:1:1", *(f"cross:2:{h}" for h in range(1, engine.n_heads + 1)))
    reference = _zeroed_copy(engine, heads)
    by_hand = HFEngine(reference, engine.tokenizer, "zeroed copy", engine.card)  # its hooks (copied) stay asleep
    options = DecodeOptions(ablate=HEADS, contributions=True, max_len=SHORT)
    trace = engine.trace(SOURCE, TARGET if teacher else None, options)
    expected = by_hand.trace(SOURCE, TARGET if teacher else None, DecodeOptions(contributions=True, max_len=SHORT))
    assert trace.options.ablate == heads
    assert trace.target_tokens == expected.target_tokens
    np.testing.assert_allclose([s.prob for s in trace.steps], [s.prob for s in expected.steps], rtol=0, atol=1e-5)
    if teacher:
        got = _forced(engine, SOURCE, HEADS).logits
        src, labels = engine.encode_source(SOURCE)[0], engine.encode_target(TARGET)
        with torch.no_grad():
            ref = reference(input_ids=torch.tensor([src]), use_cache=False,
                            decoder_input_ids=torch.tensor([[engine.start_id, *labels[:-1]]])).logits[0]
        np.testing.assert_allclose(got, ref.numpy(), rtol=0, atol=1e-5)
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        np.testing.assert_allclose(getattr(trace, kind), getattr(expected, kind), rtol=0, atol=1e-5, err_msg=kind)
    # Contributions ran under the same heads off: a switched-off head sends nothing, as in the zeroed copy.
    for kind, ref_nw in _reference(engine, trace, reference).items():
        np.testing.assert_allclose(trace.contributions["norm_weighted"][kind], ref_nw, rtol=0, atol=1e-5,
                                   err_msg=kind)
    assert (trace.contributions["norm_weighted"]["cross_attention"][1] == 0).all()
    np.testing.assert_allclose(trace.contributions["source_share"], expected.contributions["source_share"],
                               rtol=0, atol=1e-5)


def test_teacher_forced_parts_with_heads_off_equal_a_replay(engine):
    options = DecodeOptions(mode="teacher_forced", contributions=True, ablate=("enc:2:1", "cross:1:3"))
    run = engine.teacher_forced_batch([engine.encode_source(SOURCE)[0]], [engine.encode_target(TARGET)], options)[0]
    replayed = engine.contribution_parts(run, options)
    for kind, norms in replayed.value_norms.items():
        np.testing.assert_allclose(run.extra["parts"].value_norms[kind], norms, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(run.extra["parts"].residual_norms, replayed.residual_norms, rtol=1e-5, atol=1e-5)
    assert (replayed.value_norms["encoder_self_attention"][1, 0] == 0).all()
    assert (replayed.value_norms["cross_attention"][0, 2] == 0).all()
    assert (replayed.value_norms["cross_attention"][0, :2] > 0).all()


def _hook_counts(model) -> list[int]:
    return [len(o._forward_pre_hooks) for layers in _projections(model).values() for _, o in layers]


def test_one_threads_ablation_leaves_anothers_run_plain_and_the_model_unchanged(engine):
    model = engine.model
    before = {k: v.clone() for k, v in model.state_dict().items()}
    plain_options, off_options = DecodeOptions(max_len=SHORT), DecodeOptions(ablate=("cross:*:*", "enc:1:1"),
                                                                            max_len=SHORT)
    plain, ablated = engine.trace(SOURCE, options=plain_options), engine.trace(SOURCE, options=off_options)
    assert [s.prob for s in plain.steps] != [s.prob for s in ablated.steps]
    inside, finished, seen, results = threading.Event(), threading.Event(), {}, {}

    def pause(_module, _args):  # in the ablated thread's first decoder step: wait while the other one runs
        if threading.current_thread().name == "ablated" and not inside.is_set():
            seen["active in the ablated thread"] = ablation.active()
            inside.set()
            finished.wait(timeout=60)

    def run(name, options):
        try:
            if name == "plain":
                assert inside.wait(timeout=60)
                seen["active in the plain thread"] = ablation.active()
            results[name] = engine.trace(SOURCE, options=options)
        except BaseException as exc:  # reported below, never a hang
            results[name] = exc
        finally:
            if name == "plain":
                finished.set()

    handle = _projections(model)["cross_attention"][0][1].register_forward_pre_hook(pause)
    try:
        threads = [threading.Thread(target=run, name=n, args=(n, o))
                   for n, o in (("ablated", off_options), ("plain", plain_options))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=120)
    finally:
        handle.remove()
    for result in results.values():
        if isinstance(result, BaseException):
            raise result
    assert seen == {"active in the ablated thread": True, "active in the plain thread": False}
    assert results["plain"].to_json() == plain.to_json()  # ran while the other thread's heads were off
    assert results["ablated"].to_json() == ablated.to_json()
    assert not ablation.active()
    assert engine.trace(SOURCE, options=plain_options).to_json() == plain.to_json()  # nothing left behind
    assert all(torch.equal(before[k], v) for k, v in model.state_dict().items())
    assert set(_hook_counts(model)) == {1}
    HFEngine(model, engine.tokenizer, "second engine", engine.card)  # on the same model: no second hook
    assert set(_hook_counts(model)) == {1}
