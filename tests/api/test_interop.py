"""The Trace and the Hugging Face / bertviz world, on a tiny random Marian model (harness/models/hf_tiny.py):
`trace_to_bertviz` gives exactly the model's own `output_attentions` in bertviz's layout, and
`trace_from_generate` turns `generate`'s output into the Trace our engine writes for the same greedy run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import attention_lens
from harness.models import hf_tiny

SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    folder = hf_tiny.build_marian(tmp_path_factory.mktemp("hf") / "marian")
    return attention_lens.load(folder, device="cpu")


def test_bertviz_arguments_are_the_models_own_attention(marian):
    trace = marian.trace(SOURCE, target=TARGET)
    args = attention_lens.trace_to_bertviz(trace)
    engine = marian.engine
    src = [engine.tokenizer.convert_tokens_to_ids(t) for t in trace.source_tokens]
    dec = [engine.tokenizer.convert_tokens_to_ids(t) for t in trace.decoder_input_tokens]
    with torch.no_grad():
        out = engine.model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([dec]),
                           output_attentions=True)
    pairs = {"encoder_attention": out.encoder_attentions, "decoder_attention": out.decoder_attentions,
             "cross_attention": out.cross_attentions}
    for key, theirs in pairs.items():
        assert isinstance(args[key], tuple) and len(args[key]) == len(theirs)
        for ours, hf in zip(args[key], theirs):
            assert ours.shape == hf.shape and ours.dtype == torch.float32
            torch.testing.assert_close(ours, hf.float(), atol=1e-5, rtol=0)
    assert args["encoder_tokens"] == list(trace.source_tokens)
    assert args["decoder_tokens"] == list(trace.decoder_input_tokens)


def test_a_generate_output_becomes_the_trace_of_the_same_run(marian):
    ours = marian.trace(SOURCE, max_len=8)  # random weights do not stop: 8 greedy steps
    m, engine = ours.m, marian.engine
    batch = engine.tokenizer([SOURCE], return_tensors="pt")
    with torch.no_grad():  # one step more: generate forces the end token at its last step
        out = engine.model.generate(**batch, do_sample=False, num_beams=1, max_new_tokens=m + 1,
                                    output_attentions=True, return_dict_in_generate=True, output_scores=True)
    theirs = attention_lens.trace_from_generate(out, engine.tokenizer, batch["input_ids"], name="tiny")
    assert theirs.m == m + 1 and theirs.target_tokens[-1] == "</s>"
    assert theirs.source_tokens == ours.source_tokens
    assert theirs.target_tokens[:m] == ours.target_tokens
    assert theirs.decoder_input_tokens[:m] == ours.decoder_input_tokens
    np.testing.assert_allclose(theirs.encoder_self_attention, ours.encoder_self_attention, atol=1e-5)
    np.testing.assert_allclose(theirs.decoder_self_attention[:, :, :m, :m], ours.decoder_self_attention, atol=1e-5)
    np.testing.assert_allclose(theirs.cross_attention[:, :, :m], ours.cross_attention, atol=1e-5)
    assert [s.token for s in theirs.steps[:m]] == [s.token for s in ours.steps]
    np.testing.assert_allclose([s.prob for s in theirs.steps[:m]], [s.prob for s in ours.steps], atol=1e-5)
    attention_lens.show(theirs)  # shows like any other Trace


def test_generate_without_attention_or_with_beams_is_refused(marian):
    engine = marian.engine
    batch = engine.tokenizer([SOURCE], return_tensors="pt")
    with torch.no_grad():
        plain = engine.model.generate(**batch, max_new_tokens=3, return_dict_in_generate=True)
        beams = engine.model.generate(**batch, max_new_tokens=3, num_beams=2, output_attentions=True,
                                      return_dict_in_generate=True, output_scores=True)
    with pytest.raises(ValueError, match="output_attentions=True"):
        attention_lens.trace_from_generate(plain, engine.tokenizer, batch["input_ids"])
    with pytest.raises(ValueError, match="num_beams=1"):
        attention_lens.trace_from_generate(beams, engine.tokenizer, batch["input_ids"])
