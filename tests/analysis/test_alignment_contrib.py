"""Alignment read off norm-weighted and rollout cross-attention: method names, and the links equal
those extracted by hand from the Trace's contributions."""

from __future__ import annotations

from dataclasses import replace

import pytest
from attention_lens.model.analysis.alignment import Method, extract, links_of, run_alignment, trace_word_attention
from attention_lens.model.analysis.alignment.methods import weights_of
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine import DecodeOptions


@pytest.mark.parametrize("name, weights", [("argmax-plain-mean", "raw"), ("union-plain-mean-norm", "norm"),
                                           ("argmax-shift-L2H1-rollout", "rollout"), ("best-norm", "norm"),
                                           ("best-raw", "raw"), ("best-saliency", "saliency")])
def test_method_names_carry_the_weights(name, weights):
    assert weights_of(name) == weights
    if not name.startswith("best"):
        assert Method.parse(name).name == name and Method.parse(name).weights == weights


def test_bad_weights_are_refused():
    with pytest.raises(ValueError):
        weights_of("best-flow")
    with pytest.raises(ValueError, match="every weights"):  # best searches them all: it has no one weights
        weights_of("best")


@pytest.mark.parametrize("weights, key", [("norm", "norm_weighted"), ("rollout", "rollout")])
def test_links_are_those_of_the_contribution_arrays(tiny_engine, small_tsv, weights, key):
    rows = read_tsv(small_tsv)
    report = run_alignment(tiny_engine, rows, f"argmax-plain-mean-{weights}", progress=False)
    assert report.links
    for k, links in report.links.items():
        row = rows[k]
        trace = tiny_engine.trace(row.source, row.target, DecodeOptions(mode="teacher_forced", contributions=True))
        as_contrib = replace(trace, cross_attention=trace.contributions[key]["cross_attention"])
        wa = trace_word_attention(as_contrib, row.target.split())
        assert links == links_of(extract(wa.matrix("plain", None, None), "argmax"))
    assert report.method.weights == weights
    assert report.summary()["method"].endswith(weights)
