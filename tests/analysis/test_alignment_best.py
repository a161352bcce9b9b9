"""`--method best` when the lowest-AER method reads weights other than the first searched (raw): gold links made
from the tiny model's own norm-weighted head, so that head wins by construction, on every path that reports the
chosen method's counts (half-and-half selection, --select-on, score-links --model)."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.analysis.alignment import format_pharaoh, run_alignment
from attention_lens.model.cli import main
from attention_lens.model.corpora import Example

from harness.models.tiny import SOURCES, TARGETS

GOLD_METHOD = "argmax-plain-L1H2-norm"  # raw's best AER on these links is 0.18 for the tiny checkpoint


@pytest.fixture(scope="module")
def norm_gold(tiny_engine, tmp_path_factory):
    """24 lines (the six sentences four times: 20 or more, so best is chosen on the first half) whose gold is
    the norm-weighted head's own links."""
    rows = [Example(s, t, "") for s, t in zip(SOURCES, TARGETS)]
    links = run_alignment(tiny_engine, rows, GOLD_METHOD, progress=False).links
    path = tmp_path_factory.mktemp("best") / "norm_gold.tsv"
    path.write_text("".join(f"{s}\t{t}\t{format_pharaoh(links[k])}\n" for k, (s, t) in enumerate(zip(SOURCES, TARGETS)))
                    * 4, encoding="utf-8")
    return path


def test_best_reports_a_method_of_later_weights_on_the_held_out_half(tiny_ckpt, norm_gold, capsys):
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(norm_gold), "--method", "best", "--json",
                 "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["method"] == GOLD_METHOD and result["aer"] == 0
    assert result["selection"]["chosen_on"] == result["selection"]["reported_on"] == 12
    assert result["n_gold"] == 24 and result["n_scored"] == 12 and len(result["sentences"]) == 24
    assert sum(bool(r.get("selection")) for r in result["sentences"]) == 12
    assert all(r["aer"] == 0 for r in result["sentences"])  # the chosen-on half's counts are the chosen method's


def test_best_chosen_on_separate_sentences_reports_a_method_of_later_weights(tiny_ckpt, norm_gold, capsys):
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(norm_gold), "--method", "best", "--select-on",
                 str(norm_gold), "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["method"] == GOLD_METHOD and result["aer"] == 0 and result["selection"]["reported_on"] == 24


def test_score_links_beside_a_best_method_of_later_weights(tiny_ckpt, norm_gold, tmp_path, capsys):
    links = tmp_path / "links.txt"
    links.write_text("".join(line.split("\t")[2] for line in norm_gold.read_text().splitlines(True)))
    assert main(["score-links", "--data", str(norm_gold), "--links", str(links), "--model", str(tiny_ckpt),
                 "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["aer"] == 0 and result["model"]["method"] == GOLD_METHOD and result["model"]["aer"] == 0
