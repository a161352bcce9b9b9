"""Gradient saliency (model.engine.saliency, the engines' embedded_step): integrated gradients are complete
(they sum to the logit's difference from the padding baseline within TOLERANCE) on a shipped model and on tiny
Hugging Face models, and the source gets exactly nothing when every cross-attention head is off."""

from __future__ import annotations

import json

import numpy as np
import pytest

from model.builtin.engine import BuiltinEngine
from model.cli import main
from model.engine import DecodeOptions
from model.engine.loader import load_engine
from model.engine.saliency import MAX_INTERVALS, START, TOLERANCE, spearman
from tests.conftest import ROOT
from tests.fixtures import hf_tiny

SHIPPED = ROOT / "checkpoints" / "en-fr"
HF_FAMILIES = ("marian", "t5", "bart")


def assert_complete(trace) -> None:
    """Every row: the IG sum equals f(x) - f(b) within the stated tolerance, in at most MAX_INTERVALS intervals."""
    assert len(trace.saliency["steps"]) == trace.m
    for t, row in enumerate(trace.saliency["steps"]):
        assert len(row["source"]) == trace.n
        delta = row["logit"] - row["baseline_logit"]
        total = sum(row["source"]) + sum(row["prefix"])
        assert abs(total - delta) <= TOLERANCE * max(abs(delta), 1.0), f"row {t}: {total} vs {delta}"
        assert START <= row["intervals"] <= MAX_INTERVALS
        assert row["completeness_error"] == pytest.approx(abs(total - delta), abs=1e-9)


def test_integrated_gradients_are_complete_on_a_shipped_model():
    engine = BuiltinEngine.load(SHIPPED)
    trace = engine.trace("the black cat sat on the mat .", options=DecodeOptions(saliency=True))
    assert trace.target_tokens[-1] == "</s>"
    assert_complete(trace)
    # The rows saw the prefix up to themselves (causal): row t attributes to t + 1 decoder inputs.
    assert [len(r["prefix"]) for r in trace.saliency["steps"]] == list(range(1, trace.m + 1))


@pytest.fixture(scope="module")
def hf_engines(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_why")
    builders = {"marian": hf_tiny.build_marian, "t5": hf_tiny.build_t5, "bart": hf_tiny.build_bart}
    return {name: load_engine(builders[name](root / name)) for name in HF_FAMILIES}


@pytest.mark.parametrize("family", HF_FAMILIES)
def test_integrated_gradients_are_complete_on_tiny_hugging_face_models(hf_engines, family):
    trace = hf_engines[family].trace("the cat sat on the mat .", options=DecodeOptions(saliency=True, max_len=5))
    assert_complete(trace)


def test_teacher_forcing_without_the_causal_mask_attributes_to_the_whole_target(tiny_engine):
    trace = tiny_engine.trace("the cat sat .", target="le chat s' assit .",
                              options=DecodeOptions(saliency=True, causal=False))
    assert_complete(trace)
    assert {len(r["prefix"]) for r in trace.saliency["steps"]} == {trace.m}


def test_source_saliency_is_zero_with_every_cross_attention_head_off(tiny_engine, hf_engines):
    for engine in (tiny_engine, hf_engines["marian"]):
        trace = engine.trace("the cat sat on the mat .", options=DecodeOptions(saliency=True, max_len=4,
                                                                               ablate=("cross:*:*",)))
        steps = trace.saliency["steps"]
        for row in steps:
            assert row["source"] == [0.0] * trace.n and row["source_input_x_gradient"] == [0.0] * trace.n
            assert all(rho is None for layer in row["spearman"] for rho in layer)  # nothing to rank
        # The target side still carries the prediction (Marian's row 0 reads the padding id, its own baseline).
        assert any(v != 0.0 for row in steps[1:] for v in row["prefix"])


def test_saliency_beside_each_cross_attention_head(tiny_engine):
    trace = tiny_engine.trace("the dog sat near the bank .", options=DecodeOptions(saliency=True, max_len=3))
    for t, row in enumerate(trace.saliency["steps"]):
        assert np.array(row["spearman"]).shape == trace.cross_attention.shape[:2]
        rho = spearman(trace.cross_attention[1, 2, t], np.abs(row["source"]))
        assert row["spearman"][1][2] == pytest.approx(rho)


def test_spearman_is_the_rank_correlation():
    a, b = np.array([0.1, 0.5, 0.2, 0.9]), np.array([3.0, 1.0, 2.0, 0.0])
    d = np.argsort(np.argsort(a)) - np.argsort(np.argsort(b))
    assert spearman(a, b) == pytest.approx(1 - 6 * (d ** 2).sum() / (4 * (16 - 1)))  # distinct values
    assert spearman([1, 2, 2, 3], [1, 2, 2, 3]) == pytest.approx(1.0)  # ties at their mean rank
    assert spearman([1, 1, 1], [1, 2, 3]) is None


def test_saliency_from_the_command_line(tiny_ckpt, tmp_path):
    out = tmp_path / "t.json"
    assert main(["trace", "--model", str(tiny_ckpt), "--text", "the cat sat .", "--max-len", "2", "--saliency",
                 "--out", str(out)]) == 0
    data = json.loads(out.read_text())
    assert data["options"]["saliency"] is True and len(data["saliency"]["steps"]) == 2
    assert data["saliency"]["tolerance"] == TOLERANCE
