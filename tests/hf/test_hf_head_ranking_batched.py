"""The Heads ranking of a Hugging Face model with many heads off in one pass (a copy of the batch per head, a head
mask per batch row on the output projections, the encoder run once for the decoder's heads: model.hf.ablation
head_off_nll) gives the figures of one teacher-forced pass per head (Engine.head_off_nll's default) and the same
ranking, on the tiny Marian, T5 and BART; also with the causal mask off and with passes split by a small budget."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from attention_lens.model.analysis.ablation import every_head_name, rank_heads, ranking_options
from attention_lens.model.analysis.scores import source_ids
from attention_lens.model.engine.contract import Engine
from attention_lens.model.hf import ablation
from attention_lens.model.hf.engine import HFEngine

from harness.models import hf_tiny

SOURCES, TARGETS = hf_tiny.UNEVEN_SOURCES, hf_tiny.UNEVEN_TARGETS


@pytest.fixture
def engine(hf_engine) -> HFEngine:
    """Each tiny family's engine (tests/hf/conftest.py)."""
    return hf_engine


def _batch(engine):
    return [source_ids(engine, s) for s in SOURCES], [engine.prepare_target(t)[0] for t in TARGETS]


@pytest.mark.parametrize("causal", [True, False], ids=["causal", "causal-off"])
def test_batched_equals_one_pass_per_head(engine, causal, monkeypatch):
    srcs, labels = _batch(engine)
    heads = every_head_name(engine)
    options = ranking_options(engine)
    if not causal:
        if not engine.supports_causal_switch:
            pytest.skip("this family cannot switch the causal mask off")
        options = replace(options, causal=False)
    one_per_head = Engine.head_off_nll(engine, srcs, labels, options, heads)
    calls = []
    real = ablation.head_off_nll
    monkeypatch.setattr("attention_lens.model.hf.engine.batched_head_off_nll",
                        lambda *a, **k: calls.append(1) or real(*a, **k, budget=1))  # one copy per pass
    single = engine.head_off_nll(srcs, labels, options, heads)
    monkeypatch.undo()
    batched = engine.head_off_nll(srcs, labels, options, heads)  # every head of a stack in one pass
    assert calls, "the batched path was not taken"
    tokens = sum(map(len, labels))
    for got in (batched, single):
        assert np.abs(got - one_per_head).max() / tokens <= 1e-5, np.abs(got - one_per_head).max() / tokens
    # each head off changes the loss somewhere (random weights): the batch rows did not all run plainly
    assert np.abs(batched[1:] - batched[0]).max() > 1e-6


def test_ranking_order_is_the_same(engine, monkeypatch):
    kw = dict(progress=False, batch_size=2)
    batched = rank_heads(engine, SOURCES, TARGETS, **kw)
    monkeypatch.setattr(HFEngine, "head_off_nll", Engine.head_off_nll)
    one_per_head = rank_heads(engine, SOURCES, TARGETS, **kw)
    assert abs(batched["base_loss"] - one_per_head["base_loss"]) <= 1e-6
    old = {f"{h['kind']}:{h['layer']}:{h['head']}": h for h in one_per_head["heads"]}
    new = [f"{h['kind']}:{h['layer']}:{h['head']}" for h in batched["heads"]]
    assert sorted(new) == sorted(old)
    for h in batched["heads"]:  # every head's figures within float rounding of the old ones
        name = f"{h['kind']}:{h['layer']}:{h['head']}"
        for k in ("loss_increase", "nll"):
            assert abs(h[k] - old[name][k]) <= 1e-5, (name, k, h[k], old[name][k])
    # the order: a swap only between heads whose loss increases are within 1e-5
    for a, b in zip(new, [f"{h['kind']}:{h['layer']}:{h['head']}" for h in one_per_head["heads"]]):
        assert a == b or abs(old[a]["loss_increase"] - old[b]["loss_increase"]) <= 1e-5
