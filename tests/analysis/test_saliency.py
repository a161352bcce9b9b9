"""Gradient saliency (model.engine.saliency, the engines' embedded_run): integrated gradients are complete
(they sum to the logit's difference from the padding baseline within TOLERANCE) on the shipped models and on tiny
Hugging Face models, in far fewer points than equal intervals need; rows sharing batched passes get what passes
of their own give; the source gets exactly nothing when every cross-attention head is off."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.cli import main
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.saliency import MAX_INTERVALS, START, TOLERANCE, evaluate, spearman

from harness.models import hf_tiny
from tests.fixtures.checkpoints import ROOT

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


@pytest.fixture(scope="module")
def shipped() -> BuiltinEngine:
    """The shipped en-fr, loaded once for the module's tests."""
    return BuiltinEngine.load(SHIPPED)


def test_integrated_gradients_are_complete_on_a_shipped_model(shipped):
    trace = shipped.trace("the black cat sat on the mat .", options=DecodeOptions(saliency=True))
    assert trace.target_tokens[-1] == "</s>"
    assert_complete(trace)
    # The rows saw the prefix up to themselves (causal): row t attributes to t + 1 decoder inputs.
    assert [len(r["prefix"]) for r in trace.saliency["steps"]] == list(range(1, trace.m + 1))


@pytest.mark.parametrize("name, text", [("de-en", "Der Hund, den die Katze jagte, bellte."),
                                        ("en-fr-no-scaling", "We sat on the bank of the river."),
                                        ("everyday-en-fr", "Where is the train station?")])
def test_integrated_gradients_are_complete_on_the_other_shipped_models(name, text):
    trace = BuiltinEngine.load(ROOT / "checkpoints" / name).trace(text, options=DecodeOptions(saliency=True))
    assert_complete(trace)


def test_a_shipped_model_needs_few_points_per_row(shipped):
    """The previous scheme (equal intervals doubled from 8) needed 85 points per row on average here, up to 257;
    points placed where the integrand turns need well under half of that (measured: 26, benchmarks/RESULTS.md)."""
    texts = ["The cat sat on the mat.", "I went to the bank to get a loan.", "We sat on the bank of the river.",
             "I love you.", "Where is the train station?", "The weather is nice today."]
    points = [row["intervals"] + 1 for text in texts
              for row in shipped.trace(text, options=DecodeOptions(saliency=True)).saliency["steps"]]
    assert np.mean(points) <= 40 and max(points) < MAX_INTERVALS + 1, (np.mean(points), max(points))


def embedded(engine, text: str, options: DecodeOptions, target: str):
    """The run of text teacher-forced on target, as the engine hands it to saliency."""
    _, ids, _, _ = engine.prepare_source(text)
    labels, _ = engine.prepare_target(target)
    run = engine.teacher_forced_batch([ids], [labels], options)[0]
    return run, engine.embedded_run(run, options, [int(i) for i in run.logits.argmax(-1)])


@pytest.mark.parametrize("causal", [True, False])
def test_shared_passes_give_what_each_rows_own_passes_give(shipped, tiny_engine, hf_engines, causal):
    """Points of many rows in one batched pass (the prefix as long as its last row needs, or the whole target
    without the causal mask) against each row alone on the inputs it read: f and every token's part agree."""
    options = DecodeOptions(mode="teacher_forced", causal=causal)
    for engine in (shipped, tiny_engine, hf_engines["marian"]):
        run, er = embedded(engine, "the cat sat on the mat .", options, target="le chat s' assit sur le tapis .")
        points = [(t, a) for t in range(er.m) for a in (0.0, 0.3, 0.55, 1.0)]
        shared, alone = evaluate(er, points, together=True), evaluate(er, points, together=False)
        for (t, a), (f1, part1, ixg1), (f2, part2, ixg2) in zip(points, shared, alone):
            assert len(part1) == len(part2) == er.source.shape[0] + er.seen(t)
            assert f1 == pytest.approx(f2, abs=1e-4), (engine.name, t, a)
            np.testing.assert_allclose(part1, part2, atol=1e-4, rtol=1e-4)
            np.testing.assert_allclose(ixg1, ixg2, atol=1e-4, rtol=1e-4)
        # At the input itself (alpha = 1) each row's f is the run's own logit of its chosen token.
        at_input = [f for (t, a), (f, _, _) in zip(points, shared) if a == 1.0]
        np.testing.assert_allclose(at_input, run.logits[np.arange(er.m), list(er.chosen)], atol=1e-4)


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
