"""align's per-sentence counts: corpus figures are the AER of the summed counts, and `best` says how many
sentences its figures are on."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.analysis.alignment import SentenceScore, run_alignment, summed
from attention_lens.model.cli import main
from attention_lens.model.corpora import Example

from harness.models.tiny import SOURCES, TARGETS
from tests.analysis.conftest import GOLDS

ROWS = [Example(s, t, g) for s, t, g in zip(SOURCES, TARGETS, GOLDS)]
KEYS = {"index", "aer", "precision", "recall", "sure", "possible", "predicted", "hits_sure", "hits_possible"}


@pytest.mark.parametrize("method", ["argmax-plain-mean", "union-shift-L1H1", "threshold0.2-plain-layer1"])
def test_corpus_aer_equals_the_aer_of_summed_sentence_counts(tiny_engine, method):
    summary = run_alignment(tiny_engine, ROWS * 3, method, progress=False).summary()
    rows = summary["sentences"]
    assert len(rows) == summary["n_scored"] == 3 * sum(bool(g) for g in GOLDS)
    assert all(set(r) >= KEYS for r in rows)
    total = summed(SentenceScore.from_dict(r) for r in rows)
    assert total.aer == summary["aer"]
    assert total.precision == summary["precision"] and total.recall == summary["recall"]
    for r in rows:  # each row's ratios are its own counts'
        c = SentenceScore.from_dict(r).counts
        assert (c.aer, c.precision, c.recall) == (r["aer"], r["precision"], r["recall"])
        assert r["hits_sure"] <= r["sure"] <= r["possible"] and r["hits_possible"] <= r["predicted"]


def test_best_held_out_figures_are_the_summed_counts_of_the_reported_sentences(tiny_engine):
    rows = ROWS * 5  # 25 sentences with gold: chosen on the first half, reported on the second
    summary = run_alignment(tiny_engine, rows, "best", progress=False).summary()
    reported = [r for r in summary["sentences"] if not r.get("selection")]
    assert summary["n_scored"] == summary["selection"]["reported_on"] == len(reported) == 13
    assert summary["n_gold"] == 25 and len(summary["sentences"]) == 25
    assert summed(SentenceScore.from_dict(r) for r in reported).aer == summary["aer"]


def test_best_json_n_scored_is_the_number_of_sentences_its_aer_is_on(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "gold.tsv"
    data.write_text("".join(f"{e.source}\t{e.target}\t{e.gold}\n" for e in ROWS * 5), encoding="utf-8")
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(data), "--method", "best", "--json",
                 "--quiet"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["selection"]["chosen_on"] == 12
    assert summary["n_scored"] == summary["selection"]["reported_on"] == 13  # was 25, the file's gold count


def test_links_are_the_same_whether_kept_or_handed_on(tiny_engine):
    got: dict[int, list] = {}
    report = run_alignment(tiny_engine, ROWS * 5, "best", progress=False,
                           on_links=lambda k, links: got.__setitem__(k, links))
    assert got == report.links and len(got) == 30
