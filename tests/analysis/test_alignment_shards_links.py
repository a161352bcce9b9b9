"""align read as a stream: four shards merged equal one run, their links files too; a Pharaoh file written by
align and read back by score-links scores identically; score-links compares a links file with the model."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.analysis.alignment.merge import merge_summaries
from attention_lens.model.cli import main

from harness.models.tiny import SOURCES, TARGETS
from tests.analysis.conftest import GOLDS

LINES = [f"{s}\t{t}\t{g}" for s, t, g in zip(SOURCES, TARGETS, GOLDS)] * 3


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("shards") / "gold.tsv"
    path.write_text("\n".join(LINES[:7] + [""] + LINES[7:]) + "\n", encoding="utf-8")  # a blank line kept
    return path


def _align(capsys, *args) -> dict:
    assert main(["align", *args, "--json", "--quiet"]) == 0
    return json.loads(capsys.readouterr().out)


def test_four_shards_merged_equal_one_run(tiny_ckpt, gold_file, capsys):
    common = ["--model", str(tiny_ckpt), "--data", str(gold_file), "--method", "argmax-plain-mean"]
    whole = _align(capsys, *common)
    shards = [_align(capsys, *common, "--shard", f"{k}/4") for k in range(1, 5)]
    assert sorted(r["index"] for s in shards for r in s["sentences"]) == [r["index"] for r in whole["sentences"]]
    merged = merge_summaries(shards)
    paths = []
    for k, shard in enumerate(shards, 1):
        paths.append(gold_file.parent / f"part{k}.json")
        paths[-1].write_text(json.dumps(shard), encoding="utf-8")
    assert main(["merge", *map(str, paths)]) == 0  # the merge command reaches the same function
    assert json.loads(capsys.readouterr().out)["sentences"] == whole["sentences"]
    for key in ("n", "n_scored", "n_gold", "method", "aer", "precision", "recall", "heads", "readings",
                "sentences", "breakdown", "skipped"):
        assert merged[key] == whole[key], key
    assert merged["merge"]["tally"] == whole["merge"]["tally"]
    assert merged["omissions"]["omitted"] == whole["omissions"]["omitted"]
    for a, b in zip(merged["sinks"]["heads"], whole["sinks"]["heads"]):
        assert a["special"] == pytest.approx(b["special"]) and a["punctuation"] == pytest.approx(b["punctuation"])


def test_four_shards_links_files_merged_equal_one_runs_file(tiny_ckpt, gold_file, tmp_path, capsys):
    common = ["--model", str(tiny_ckpt), "--data", str(gold_file), "--method", "argmax-plain-mean"]
    whole = tmp_path / "whole.links"
    _align(capsys, *common, "--out", str(whole))
    parts = [tmp_path / f"links.{k}.txt" for k in range(1, 5)]
    for k, part in enumerate(parts, 1):
        _align(capsys, *common, "--shard", f"{k}/4", "--out", str(part))
        written = part.read_text(encoding="utf-8").splitlines()
        assert len(written) == len(LINES) + 1  # a line for every line of the data, links on its own only
        assert all(not text for n, text in enumerate(written, 1) if (n - 1) % 4 != k - 1)
    merged = tmp_path / "merged.links"
    assert main(["merge", "--links", *map(str, parts), "--out", str(merged)]) == 0
    assert merged.read_text(encoding="utf-8") == whole.read_text(encoding="utf-8")
    assert main(["merge", "--links", str(parts[0]), str(parts[0])]) == 2  # a shard twice
    assert "not shards of one run" in capsys.readouterr().err
    short = tmp_path / "short.links"
    short.write_text("0-0\n", encoding="utf-8")
    assert main(["merge", "--links", str(parts[1]), str(short)]) == 2
    assert f"{short} ended before line 2" in capsys.readouterr().err


def test_shards_of_best_without_selection_data_are_refused(tiny_ckpt, gold_file, capsys):
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(gold_file), "--method", "best", "--shard", "1/2",
                 "--quiet"]) == 2
    assert "--select-on" in capsys.readouterr().err


def test_a_pharaoh_file_written_by_align_scores_identically_when_read_back(tiny_ckpt, gold_file, tmp_path, capsys):
    links = tmp_path / "links.txt"
    run = _align(capsys, "--model", str(tiny_ckpt), "--data", str(gold_file), "--method", "union-shift-L1H2",
                 "--out", str(links))
    written = links.read_text(encoding="utf-8").splitlines()
    assert len(written) == len(LINES) + 1 and written[7] == ""  # line n of the output is line n of the data
    assert main(["score-links", "--data", str(gold_file), "--links", str(links), "--json", "--quiet"]) == 0
    scored = json.loads(capsys.readouterr().out)
    assert (scored["aer"], scored["precision"], scored["recall"]) == (run["aer"], run["precision"], run["recall"])
    assert [{k: r[k] for k in run["sentences"][0] if k != "omitted"} for r in scored["sentences"]] == [
        {k: r[k] for k in run["sentences"][0] if k != "omitted"} for r in run["sentences"]]
    assert scored["breakdown"]["length"] == run["breakdown"]["length"]
    assert scored["breakdown"]["distance"] == run["breakdown"]["distance"]


def test_score_links_beside_the_model_says_where_they_disagree(tiny_ckpt, gold_file, tmp_path, capsys):
    links = tmp_path / "diag.txt"  # a diagonal aligner: word k to word k
    links.write_text("".join(" ".join(f"{k}-{k}" for k in range(min(len(line.split("\t")[0].split()),
                                                                      len(line.split("\t")[1].split()))))
                             + "\n" if line else "\n" for line in LINES[:7] + [""] + LINES[7:]), encoding="utf-8")
    assert main(["score-links", "--data", str(gold_file), "--links", str(links), "--model", str(tiny_ckpt),
                 "--method", "argmax-plain-mean", "--json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["method"] == "argmax-plain-mean" and out["model"]["n_scored"] == out["n_scored"]
    v = out["versus"]
    assert v == {k: sum(r["versus"][k] for r in out["sentences"]) for k in v}
    first = out["sentences"][0]
    assert first["versus"]["agree"] + first["versus"]["links_only"] == first["predicted"]


def test_a_links_file_shorter_than_the_data_is_a_one_line_error(gold_file, tmp_path, capsys):
    links = tmp_path / "short.txt"
    links.write_text("0-0\n", encoding="utf-8")
    assert main(["score-links", "--data", str(gold_file), "--links", str(links), "--quiet"]) == 2
    err = capsys.readouterr().err.strip()
    assert "one line per line of the data file" in err and "Traceback" not in err
