"""The key-value cache, counted and checked (model/analysis/kv_cache.py): the counts match a hand computation,
the cache sizes the panel shows are the engines' real ones at every step, and a cached step's rows equal a
recompute of the same step within 1e-5, for our engine and the Hugging Face one."""

from __future__ import annotations

import pytest
import torch
from attention_lens.model.analysis.kv_cache import Dims, expected_rows, generation_macs, measure_step, step_macs
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.loader import load_engine

from harness.models import hf_tiny

SOURCE = "the black cat sat on the mat ."
TINY = Dims(d_model=4, d_attn=4, d_ff=8, ff_matrices=2, vocab=10, layers=1)


def test_multiply_adds_by_hand():
    # d = A = 4, F = 8, g = 2, V = 10, one layer, n = 3 source tokens, step t = 1 (T = 2 positions).
    # cached: self 4*4*4 + 2*2*4 = 80; cross 2*4*4 + 2*3*4 = 56; cross K/V 0 (made at step 0);
    #         FFN 2*4*8 = 64; logits 4*10 = 40.
    assert step_macs(TINY, 3, 1, cached=True) == {"self_attention": 80, "cross_attention": 56, "cross_kv": 0,
                                                  "feed_forward": 64, "logits": 40}
    # recompute: self 4*2*4*4 + 2*2*2*4 = 160; cross 2*2*4*4 + 2*2*3*4 = 112; cross K/V 2*3*4*4 = 96;
    #            FFN 2*2*4*8 = 128; logits 40.
    assert step_macs(TINY, 3, 1, cached=False) == {"self_attention": 160, "cross_attention": 112, "cross_kv": 96,
                                                   "feed_forward": 128, "logits": 40}
    # step 0 is the same work either way (one position; the cross K/V made once): 64+2*4 + 32+24 + 96 + 64 + 40.
    assert step_macs(TINY, 3, 0, cached=True) == step_macs(TINY, 3, 0, cached=False)
    assert generation_macs(TINY, 3, 1, cached=True) == 64 + 8 + 32 + 24 + 96 + 64 + 40
    assert generation_macs(TINY, 3, 2, cached=True) == 328 + 240
    assert generation_macs(TINY, 3, 2, cached=False) == 328 + 536
    two = Dims(4, 4, 8, 2, 10, layers=2)  # the layers multiply everything but the logits
    assert sum(step_macs(two, 3, 1, True).values()) == 2 * (240 - 40) + 40


def test_without_the_cache_a_generation_grows_faster():
    dims = Dims(d_model=128, d_attn=128, d_ff=512, ff_matrices=2, vocab=1000, layers=3)
    ratios = [generation_macs(dims, 10, s, False) / generation_macs(dims, 10, s, True) for s in (5, 20, 80)]
    assert ratios[0] < ratios[1] < ratios[2] and ratios[2] > 10


@pytest.fixture(scope="module")
def hf_engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_kv")
    return [load_engine(hf_tiny.build_marian(root / "marian")), load_engine(hf_tiny.build_t5(root / "t5"))]


def _engines(tiny_engine, hf_engines):
    return [tiny_engine, *hf_engines]


@torch.inference_mode()
def test_the_counted_cache_is_the_engines_real_cache_at_every_step(tiny_engine, hf_engines):
    for engine in _engines(tiny_engine, hf_engines):
        src = engine.prepare_source(SOURCE)[1]
        stepper = engine.start_decoding([src], DecodeOptions(), need_weights=True)
        last = torch.tensor([[engine.start_id]])
        for t in range(6):
            logits, _, _ = stepper.step(last, t)
            assert stepper.cache_rows() == expected_rows(len(src), t, engine.n_decoder_layers), (engine.family, t)
            last = logits.argmax(-1, keepdim=True)
        assert dims_ok(engine)


def dims_ok(engine) -> bool:
    d = engine.decoder_dims()
    return all(isinstance(v, int) and v > 0 for v in d.values()) and set(d) == {"d_model", "d_attn", "d_ff",
                                                                              "ff_matrices", "vocab"}


def test_a_cached_step_equals_its_recompute(tiny_engine, hf_engines):
    for engine in _engines(tiny_engine, hf_engines):
        src = engine.prepare_source(SOURCE)[1]
        trace = engine.trace(SOURCE, options=DecodeOptions(max_len=8))
        dec_in = [engine.start_id, *[s.id for s in trace.steps[:-1]]]
        step = len(dec_in) - 1
        got = measure_step(engine, src, dec_in, step, repeats=3)
        assert got.max_attention_difference < 1e-5, engine.family
        assert got.max_logit_difference < 1e-4, engine.family
        assert got.rows_before == expected_rows(len(src), step - 1, engine.n_decoder_layers)
        assert got.rows_after == expected_rows(len(src), step, engine.n_decoder_layers)
        assert got.cached_seconds > 0 and got.recompute_seconds > 0 and got.repeats == 3
    with pytest.raises(ValueError, match="step must be"):
        measure_step(tiny_engine, src, dec_in, len(dec_in))
