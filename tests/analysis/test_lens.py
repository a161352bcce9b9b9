"""The logit lens (model.engine.lens, the engines' layer_logits): its last layer is the model's own next-token
distribution, and every layer equals a hand computation from the weights of a tiny model."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.cli import main
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.lens import first_top_layer, lens

from tests.fixtures.checkpoints import ROOT

SHIPPED = ROOT / "checkpoints" / "en-fr"


def last_layer_probs(trace) -> list[list[tuple[str, float]]]:
    return [[(e["token"], e["prob"]) for e in row[-1]] for row in trace.lens["top_k"]]


def test_last_layer_is_the_models_own_distribution_exactly_on_a_shipped_model():
    engine = BuiltinEngine.load(SHIPPED)
    trace = engine.trace("the dog sat near the bank of the river .",
                         target="le chien s' assit près de la rive de la rivière .",
                         options=DecodeOptions(lens=True, report_top_k=5))
    assert trace.lens["layers"] == engine.n_decoder_layers == 3
    assert last_layer_probs(trace) == [list(s.top_k) for s in trace.steps]  # bit for bit: the same pass
    assert [row[-1] for row in trace.lens["chosen_rank"]] == [1] * trace.m  # teacher forcing: the top guess


def test_last_layer_matches_free_running_decoding(tiny_engine):
    """Decoding computed its rows one cached step at a time, the lens in one replay: float32 rounding apart."""
    trace = tiny_engine.trace("the black cat sat on the mat .", options=DecodeOptions(lens=True, max_len=8))
    lens_last = [[p for _, p in row] for row in last_layer_probs(trace)]
    np.testing.assert_allclose(lens_last, [[p for _, p in s.top_k] for s in trace.steps], rtol=0, atol=1e-6)
    assert [[t for t, _ in row] for row in last_layer_probs(trace)] == [[t for t, _ in s.top_k] for s in trace.steps]
    np.testing.assert_allclose([row[-1] for row in trace.lens["chosen_prob"]], [s.prob for s in trace.steps],
                               rtol=0, atol=1e-6)


def layer_norm(x, w, b):
    mu = x.mean(-1, keepdims=True)
    var = ((x - mu) ** 2).mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * w + b


def mha(p, prefix, x, mem, h, mask=None):
    """Multi-head attention by hand from the state dict (float64): x queries, mem keys/values."""
    def lin(name, v):
        return v @ p[f"{prefix}.{name}.weight"].T + p[f"{prefix}.{name}.bias"]
    q, k, v = lin("w_q", x), lin("w_k", mem), lin("w_v", mem)
    d_k = q.shape[-1] // h
    out = []
    for j in range(h):
        sl = slice(j * d_k, (j + 1) * d_k)
        s = q[:, sl] @ k[:, sl].T / math.sqrt(d_k)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        a = np.exp(s - s.max(-1, keepdims=True))
        out.append((a / a.sum(-1, keepdims=True)) @ v[:, sl])
    return lin("w_o", np.concatenate(out, -1))


def ffn(p, prefix, x):
    hid = np.maximum(x @ p[f"{prefix}.ff.net.0.weight"].T + p[f"{prefix}.ff.net.0.bias"], 0)
    return hid @ p[f"{prefix}.ff.net.3.weight"].T + p[f"{prefix}.ff.net.3.bias"]


def positions(length, d):
    pos = np.arange(length)[:, None]
    div = np.exp(np.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = np.zeros((length, d))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos * div), np.cos(pos * div)
    return pe


def hand_lens(engine, src_ids, dec_ids):
    """Every decoder layer's output through the generator, computed from the weights alone (float64)."""
    p = {k: v.detach().double().numpy() for k, v in engine.model.state_dict().items()}
    cfg = engine.cfg
    d, h = cfg.d_model, cfg.n_heads
    x = p["src_embed.weight"][src_ids] * math.sqrt(d) + positions(len(src_ids), d)
    for i in range(cfg.n_encoder_layers):
        e = f"encoder.{i}"
        x = layer_norm(x + mha(p, f"{e}.self_attn", x, x, h), p[f"{e}.norm1.weight"], p[f"{e}.norm1.bias"])
        x = layer_norm(x + ffn(p, e, x), p[f"{e}.norm2.weight"], p[f"{e}.norm2.bias"])
    y = p["tgt_embed.weight"][dec_ids] * math.sqrt(d) + positions(len(dec_ids), d)
    causal = np.tril(np.ones((len(dec_ids), len(dec_ids)), dtype=bool))
    layers = []
    for i in range(cfg.n_decoder_layers):
        e = f"decoder.{i}"
        y = layer_norm(y + mha(p, f"{e}.self_attn", y, y, h, causal), p[f"{e}.norm1.weight"], p[f"{e}.norm1.bias"])
        y = layer_norm(y + mha(p, f"{e}.cross_attn", y, x, h), p[f"{e}.norm2.weight"], p[f"{e}.norm2.bias"])
        y = layer_norm(y + ffn(p, e, y), p[f"{e}.norm3.weight"], p[f"{e}.norm3.bias"])
        layers.append(y @ p["generator.weight"].T + p["generator.bias"])
    return np.stack(layers)  # (L, m, V)


def test_every_layer_equals_a_hand_computation_from_the_weights(tiny_engine):
    trace = tiny_engine.trace("the dog sat near the bank .", options=DecodeOptions(lens=True, max_len=6,
                                                                                   report_top_k=3))
    src_ids = tiny_engine.encode_source(trace.normalised_source)[0]
    dec_ids = [tiny_engine.piece_to_id(t) for t in trace.decoder_input_tokens]
    logits = hand_lens(tiny_engine, src_ids, dec_ids)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    chosen = [s.id for s in trace.steps]
    assert trace.lens["layers"] == logits.shape[0] == 2
    for t in range(trace.m):
        for layer in range(logits.shape[0]):
            top = np.argsort(-probs[layer, t])[:3]
            got = trace.lens["top_k"][t][layer]
            assert [e["token"] for e in got] == [tiny_engine.piece(int(i)) for i in top]
            np.testing.assert_allclose([e["prob"] for e in got], probs[layer, t, top], rtol=0, atol=1e-5)
            assert trace.lens["chosen_prob"][t][layer] == pytest.approx(probs[layer, t, chosen[t]], abs=1e-5)
            assert trace.lens["chosen_rank"][t][layer] == 1 + int((probs[layer, t] > probs[layer, t, chosen[t]]).sum())


def test_first_top_layer_is_where_the_choice_becomes_and_stays_top():
    assert first_top_layer([3, 1, 1]) == 2
    assert first_top_layer([1, 2, 1]) == 3  # top at layer 1, lost at 2: it stays top only from layer 3
    assert first_top_layer([1, 1, 1]) == 1
    assert first_top_layer([1, 1, 2]) is None  # a sampled or forced token the last layer does not rank first


def test_lens_is_off_by_default_and_round_trips(tiny_engine, tiny_ckpt, tmp_path):
    plain = tiny_engine.trace("the cat sat .", options=DecodeOptions(max_len=4))
    assert plain.lens is None and "lens" not in plain.to_dict()["options"] and "lens" not in plain.to_dict()
    out = tmp_path / "t.json"
    assert main(["trace", "--model", str(tiny_ckpt), "--text", "the cat sat .", "--max-len", "4",
                 "--lens", "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["options"]["lens"] is True and data["lens"]["layers"] == 2 and len(data["lens"]["top_k"]) == 4
    npz = tmp_path / "t.npz"
    traced = tiny_engine.trace("the cat sat .", options=DecodeOptions(max_len=4, lens=True))
    traced.save(npz)
    assert type(traced).load(npz).lens == traced.lens == data["lens"]


@pytest.mark.parametrize("asked", [{"lens": True}, {"saliency": True}])
def test_a_run_with_a_bug_switch_is_refused_rather_than_replayed_healthy(tiny_engine, asked):
    with pytest.raises(ModelInputError, match="bug switch"):
        tiny_engine.trace("the cat sat .", options=DecodeOptions(unscaled=True, max_len=3, **asked))


def test_top_k_and_ranks_equal_a_full_stable_sort_ties_included():
    """lens() finds the top k among the entries at or above the k-th largest value, not by sorting the whole
    vocabulary: the result must be what a stable argsort of every row gives, ties ordered by token id."""
    rng = np.random.default_rng(7)
    logits = rng.standard_normal((3, 6, 500)).astype(np.float32)
    logits[0, 0, [3, 9, 40, 41]] = logits[0, 0].max() + 1  # a four-way tie for the top, wider than k
    logits[1, 2, [5, 6]] = logits[1, 2, 7]  # ties around an ordinary token
    logits[2, 3, :] = 0.0  # a flat row: every token tied
    chosen = [40, 6, 1, 499, 0, 250]
    got = lens(logits, chosen, str, k=3)
    probs = np.exp(logits.astype(np.float64) - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    for t, c in enumerate(chosen):
        for la in range(3):
            row = probs[la, t]
            want = np.argsort(-row, kind="stable")[:3]
            assert [e["token"] for e in got["top_k"][t][la]] == [str(i) for i in want]
            assert got["chosen_rank"][t][la] == int((row > row[c]).sum()) + 1
            assert got["chosen_prob"][t][la] == pytest.approx(row[c], rel=1e-12)
    assert got["chosen_rank"][0][0] == 1 and got["chosen_rank"][3][2] == 1  # tied for the top counts as top
