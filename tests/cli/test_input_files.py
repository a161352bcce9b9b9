"""The commands' input files read by one rule: a gold link outside its sentence is refused by every command that
reads gold (align, score-links, aligner, --select-on), naming the file and line; bytes that are not UTF-8 are
named by file and line in every input (pairs, links, merged JSON); a links file must match its data file line
for line; score-links beside a model breaks errors down by the model's own pieces per word."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.cli import main

from harness.models.tiny import SOURCES, TARGETS
from tests.analysis.conftest import GOLDS

PAIRS = "".join(f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLDS))
OUTSIDE = "the cat sat .\tle chat s' assit .\t0-0 1-1 40-2 3-4\n"  # source word 40 of 4
NOT_UTF8 = b"0-0 1-1\n0-0 \xe9\n"  # a Latin-1 byte on line 2


def _error(capsys, *argv: str) -> str:
    assert main(list(argv)) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error:") and "Traceback" not in err and len(err.splitlines()) == 1, err
    return err


@pytest.fixture
def files(tmp_path):
    pairs = tmp_path / "pairs.tsv"
    pairs.write_text(PAIRS, encoding="utf-8")
    outside = tmp_path / "outside.tsv"
    outside.write_text(PAIRS + OUTSIDE, encoding="utf-8")
    links = tmp_path / "links.txt"
    links.write_text("".join(g + "\n" for g in GOLDS), encoding="utf-8")
    return {"pairs": pairs, "outside": outside, "links": links, "dir": tmp_path}


def test_a_gold_link_outside_its_sentence_is_refused_by_every_command_naming_file_and_line(tiny_ckpt, files, capsys):
    outside, links = str(files["outside"]), files["dir"] / "links7.txt"
    links.write_text(files["links"].read_text() + "0-0\n")
    commands = [["align", "--model", str(tiny_ckpt), "--data", outside, "--quiet"],
                ["align", "--model", str(tiny_ckpt), "--data", str(files["pairs"]), "--method", "best",
                 "--select-on", outside, "--quiet"],
                ["score-links", "--data", outside, "--links", str(links), "--quiet"],
                ["aligner", "--data", outside, "--out", str(files["dir"] / "out.txt"), "--backend", "ibm2"]]
    for argv in commands:
        err = _error(capsys, *argv)
        assert f"{outside}, line 7: gold link 40-2 is outside the sentence (4 source words" in err, (argv, err)


def test_bytes_that_are_not_utf8_are_named_by_file_and_line_in_every_input(tiny_ckpt, files, capsys):
    bad = files["dir"] / "latin1.txt"
    bad.write_bytes(NOT_UTF8)
    bad_pairs = files["dir"] / "latin1.tsv"
    bad_pairs.write_bytes(PAIRS.encode() + b"\xe9t\xe9\tsummer\t\n")
    pairs, links, out = str(files["pairs"]), str(files["links"]), str(files["dir"] / "out.txt")
    for argv, named, line in [
            (["aligner", "--data", str(bad_pairs), "--out", out, "--backend", "ibm2"], bad_pairs, 7),
            (["aligner", "--data", pairs, "--also", str(bad_pairs), "--out", out, "--backend", "ibm2"], bad_pairs, 7),
            (["score-links", "--data", pairs, "--links", str(bad), "--quiet"], bad, 2),
            (["score-links", "--data", str(bad_pairs), "--links", links, "--quiet"], bad_pairs, 7),
            (["align", "--model", str(tiny_ckpt), "--data", str(bad_pairs), "--quiet"], bad_pairs, 7),
            (["align", "--model", str(tiny_ckpt), "--data", pairs, "--method", "best", "--select-on",
              str(bad_pairs), "--quiet"], bad_pairs, 7),
            (["merge", str(bad)], bad, 2),
            (["symmetrise", "--forward", links, "--reverse", str(bad), "--out", out], bad, 2)]:
        err = _error(capsys, *argv)
        assert f"{named}, line {line}: not UTF-8 (byte 0xe9" in err, (argv, err)


def test_a_links_file_with_links_past_the_data_is_refused(files, capsys):
    longer = files["dir"] / "longer.txt"
    longer.write_text(files["links"].read_text() + "\n0-0 1-1\n", encoding="utf-8")
    err = _error(capsys, "score-links", "--data", str(files["pairs"]), "--links", str(longer), "--quiet")
    assert f"{longer}, line 8 holds links but" in err and "last is on line 6" in err
    trailing = files["dir"] / "trailing.txt"  # empty lines after the last are no links
    trailing.write_text(files["links"].read_text() + "\n\n", encoding="utf-8")
    assert main(["score-links", "--data", str(files["pairs"]), "--links", str(trailing), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["aer"] == 0


def test_aligner_writes_line_n_for_line_n_of_data_across_blank_lines(files, capsys):
    spaced = files["dir"] / "spaced.tsv"
    lines = PAIRS.splitlines(True)
    spaced.write_text("".join(lines[:2]) + "\n\n" + "".join(lines[2:]), encoding="utf-8")
    out = files["dir"] / "spaced.links"
    assert main(["aligner", "--data", str(spaced), "--out", str(out), "--backend", "ibm2", "--json"]) == 0
    capsys.readouterr()
    written = out.read_text(encoding="utf-8").splitlines()
    assert len(written) == 8 and written[2] == written[3] == "" and written[4]  # the blank lines stay blank
    assert main(["score-links", "--data", str(spaced), "--links", str(out), "--json", "--quiet"]) == 0
    assert json.loads(capsys.readouterr().out)["n_scored"] == 5


def test_score_links_beside_a_model_counts_the_models_pieces_per_word(tiny_ckpt, files, capsys):
    argv = ["score-links", "--data", str(files["pairs"]), "--links", str(files["links"]), "--json", "--quiet"]
    assert main(argv) == 0
    alone = {r["band"]: r["sure"] for r in json.loads(capsys.readouterr().out)["breakdown"]["token_class"]}
    assert main([*argv, "--model", str(tiny_ckpt), "--method", "argmax-plain-mean"]) == 0
    beside = {r["band"]: r["sure"] for r in json.loads(capsys.readouterr().out)["breakdown"]["token_class"]}
    assert alone.get("split", 0) == 0  # no model: nothing says a word is split
    assert beside["split"] > 0  # the tiny model's 60-piece vocabulary splits "chased", "barked"…
