"""The gradient alignment reading (word saliency, Ding et al. 2019): each value equals a finite difference of the
reference piece's probability taken through the model's ordinary teacher-forced pass, the links are those of
the reading computed by hand, and `--method best` lists it among its candidates."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from attention_lens.model.analysis.alignment import Method, extract, links_of, run_alignment, word_attention
from attention_lens.model.analysis.alignment.gradient import embedded, reading, saliency_rows
from attention_lens.model.analysis.alignment.methods import searched_weights
from attention_lens.model.analysis.alignment.sentence_attention import engine_specials
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine import DecodeOptions

from harness.models.tiny import SOURCES, TARGETS


def _probabilities(engine, src, labels, options, position=None, factor=1.0) -> np.ndarray:
    """(m,) p(label_t) from the engine's own teacher-forced pass, source embedding `position` scaled."""
    def scale(_module, _inputs, output):
        output = output.clone()
        output[:, position] *= factor
        return output

    hook = engine.model.src_embed.register_forward_hook(scale) if position is not None else None
    try:
        run = engine.teacher_forced_batch([src], [labels], options, need_weights=False)[0]
    finally:
        if hook is not None:
            hook.remove()
    logits = torch.tensor(run.logits, dtype=torch.float64)
    return logits.softmax(-1)[torch.arange(len(labels)), torch.tensor(labels)].numpy()


@pytest.mark.parametrize("sentence", [0, 3])
def test_each_value_is_the_finite_difference_of_the_label_probability(tiny_engine, sentence):
    """s[t, i] = e_i . dp_t/de_i is the derivative of p_t along e_i scaled by (1 + eps): a central difference
    through the ordinary forward pass (not the gradient code's own pass) gives the same numbers."""
    engine = tiny_engine
    options = DecodeOptions(mode="teacher_forced")
    src, _ = engine.encode_source(engine.normalise(SOURCES[sentence]))
    labels = engine.encode_target(engine.normalise_target(TARGETS[sentence]))
    run = engine.teacher_forced_batch([src], [labels], options)[0]
    sal = saliency_rows(embedded(engine, run, options))
    assert sal.shape == (len(labels), len(src))

    def central(i: int, eps: float) -> np.ndarray:
        return (_probabilities(engine, src, labels, options, i, 1 + eps)
                - _probabilities(engine, src, labels, options, i, 1 - eps)) / (2 * eps)

    # Richardson's extrapolation of two central differences cancels their eps^2 error (a single one at eps = 1e-2
    # was off by 2.1e-4 at one of 198 cells when an earlier test had left torch on one thread)
    by_hand = np.stack([(4 * central(i, 5e-3) - central(i, 1e-2)) / 3 for i in range(len(src))], axis=1)
    assert np.abs(by_hand).max() > 1e-4  # the check is not vacuous
    np.testing.assert_allclose(sal, by_hand, atol=2e-4, rtol=2e-2)


def test_the_reading_is_the_positive_part_normalised_per_row():
    s = np.array([[0.2, -0.1, 0.6], [-1.0, -2.0, 0.0]])
    np.testing.assert_allclose(reading(s), [[0.25, 0.0, 0.75], [0.0, 0.0, 0.0]])


def test_align_links_are_those_of_the_reading_by_hand(tiny_engine, small_tsv):
    rows = read_tsv(small_tsv)
    report = run_alignment(tiny_engine, rows, "argmax-plain-mean-saliency", progress=False)
    assert report.method.weights == "saliency" and report.links
    options = DecodeOptions(mode="teacher_forced")
    for k, found in report.links.items():
        row = rows[k]
        normalised = tiny_engine.normalise(row.source)
        src, pieces = tiny_engine.encode_source(normalised)
        labels = tiny_engine.encode_target(tiny_engine.normalise_target(row.target))
        run = tiny_engine.teacher_forced_batch([src], [labels], options)[0]
        cross = reading(saliency_rows(embedded(tiny_engine, run, options)))[None, None]
        wa = word_attention(cross, pieces, [tiny_engine.piece(i) for i in labels], normalised.split(),
                            row.target.split(), specials=engine_specials(tiny_engine))
        assert found == links_of(extract(wa.matrix("plain", None, None), "argmax"))
    summary = report.summary()
    assert summary["method"] == "argmax-plain-mean-saliency" and summary["heads"] == []


def test_the_reading_has_no_heads():
    with pytest.raises(ValueError, match="no heads"):
        Method.parse("argmax-plain-L1H1-saliency")
    assert Method.parse("union-plain-mean-saliency").weights == "saliency"


def test_best_searches_every_reading_and_lists_the_gradient_among_its_candidates(tiny_engine, small_tsv):
    assert searched_weights("best") == ("raw", "norm", "rollout", "saliency")
    assert searched_weights("best-saliency") == ("saliency",)
    report = run_alignment(tiny_engine, read_tsv(small_tsv), "best", progress=False)
    listed = {c["weights"]: c for c in report.summary()["selection"]["candidates"]}
    assert set(listed) == {"raw", "norm", "rollout", "saliency"}
    assert listed["saliency"]["method"].endswith("-mean-saliency") and listed["saliency"]["aer"] is not None
    best = min(c["aer"] for c in listed.values())
    assert report.summary()["selection"]["in_sample_aer"] == pytest.approx(best)


def test_the_cli_prints_the_candidates(tiny_ckpt, small_tsv, capsys):
    from attention_lens.model.cli import main

    assert main(["align", "--model", str(tiny_ckpt), "--data", str(small_tsv), "--method", "best", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "candidate saliency" in out and "candidate rollout" in out
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(small_tsv), "--method",
                 "union-plain-mean-saliency", "--json", "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["method"] == "union-plain-mean-saliency" and summary["aer"] is not None
