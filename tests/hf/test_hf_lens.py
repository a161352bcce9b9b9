"""The logit lens on tiny Hugging Face models (model.hf.lens): the last layer is the model's own next-token
distribution, bit for bit in teacher forcing; an earlier layer is its hidden state through the decoder's final
norm and the output head, computed here by hand from the weights (T5: RMS norm, d_model^-0.5, tied embeddings;
Marian / BART, post-LN: the head and final_logits_bias alone)."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.loader import load_engine

from harness.models import hf_tiny

SOURCE, TARGET = "the black dog barked at the cat .", "le chien noir aboya contre le chat ."
BUILDERS = {"marian": hf_tiny.build_marian, "t5": hf_tiny.build_t5, "bart": hf_tiny.build_bart}


@pytest.fixture(scope="module")
def engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_lens")
    return {name: load_engine(build(root / name)) for name, build in BUILDERS.items()}


@pytest.mark.parametrize("family", list(BUILDERS))
def test_last_layer_is_the_models_own_distribution(engines, family):
    engine = engines[family]
    trace = engine.trace(SOURCE, target=TARGET, options=DecodeOptions(lens=True))
    assert trace.lens["layers"] == engine.n_decoder_layers
    assert [[(e["token"], e["prob"]) for e in row[-1]] for row in trace.lens["top_k"]] == [
        list(s.top_k) for s in trace.steps]


def softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("family", list(BUILDERS))
def test_layer_one_by_hand(engines, family):
    engine = engines[family]
    model = engine.model
    trace = engine.trace(SOURCE, target=TARGET, options=DecodeOptions(lens=True, report_top_k=3))
    src = torch.tensor([engine.encode_source(SOURCE)[0]])
    dec = torch.tensor([[engine.piece_to_id(t) for t in trace.decoder_input_tokens]])
    with torch.no_grad():
        out = model(input_ids=src, decoder_input_ids=dec, output_hidden_states=True, use_cache=False)
    h = out.decoder_hidden_states[1][0].double().numpy()  # layer 1's output (m, d)
    if family == "t5":
        norm = model.decoder.final_layer_norm
        h = h / np.sqrt((h ** 2).mean(-1, keepdims=True) + norm.variance_epsilon) * norm.weight.double().numpy()
        logits = (h * model.config.d_model ** -0.5) @ model.shared.weight.double().numpy().T
    else:  # post-LN: the layer's output is already normed; the head and the bias
        logits = h @ model.lm_head.weight.double().numpy().T + model.final_logits_bias.double().numpy()
    probs = softmax(logits)
    for t in range(trace.m):
        top = np.argsort(-probs[t])[:3]
        got = trace.lens["top_k"][t][0]
        assert [e["token"] for e in got] == [engine.piece(int(i)) for i in top]
        np.testing.assert_allclose([e["prob"] for e in got], probs[t, top], rtol=0, atol=1e-5)
