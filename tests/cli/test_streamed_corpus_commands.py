"""eval and heads read their file as a stream, in length-bucketed batches: the figures equal today's (all pairs
at once: model.analysis.scores.evaluate, rank_heads), and the --json outputs of four shards merged (`merge`)
equal one run over the whole file."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.analysis.scores import evaluate
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.cli import main as cli_main
from attention_lens.model.corpora import read_tsv

from tests.fixtures.checkpoints import ROOT

MODEL = ROOT / "checkpoints" / "en-fr"
DATA = ROOT / "assets" / "data" / "en-fr.test.tsv"


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    path = tmp_path_factory.mktemp("stream") / "small.tsv"
    lines = DATA.read_text(encoding="utf-8").splitlines()[:14]
    path.write_text("\n".join(lines[:7] + [""] + lines[7:]) + "\n", encoding="utf-8")  # a blank line is skipped
    return path


def run_json(capsys, *argv):
    assert cli_main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_eval_streamed_equals_evaluate_and_shards_merge(small, capsys, tmp_path):
    rows = read_tsv(small)
    today = evaluate(BuiltinEngine.load(MODEL), [r.source for r in rows], [r.target for r in rows])
    whole = run_json(capsys, "eval", "--model", str(MODEL), "--data", str(small), "--json", "--batch-size", "4",
                     "--window", "8", "--device", "cpu")
    for key in ("n", "exact_match", "chrf", "bleu", "teacher_forced_accuracy"):
        assert whole[key] == pytest.approx(today[key], abs=1e-9), key
    assert whole["teacher_forced_loss"] == pytest.approx(today["teacher_forced_loss"], abs=1e-6)
    files = []
    for k in range(1, 5):
        out = run_json(capsys, "eval", "--model", str(MODEL), "--data", str(small), "--json", "--shard", f"{k}/4",
                       "--device", "cpu")
        assert out["merge"]["shard"] == f"{k}/4"
        files.append(tmp_path / f"eval.{k}.json")
        files[-1].write_text(json.dumps(out))
    merged = run_json(capsys, "merge", *map(str, files))
    assert merged["n"] == whole["n"] == 14 and merged["counts"]["tokens"] == whole["counts"]["tokens"]
    for key in ("exact_match", "chrf", "bleu", "teacher_forced_accuracy"):
        assert merged[key] == pytest.approx(whole[key], abs=1e-9), key
    # other batches (padding), so float rounding apart
    assert merged["teacher_forced_loss"] == pytest.approx(whole["teacher_forced_loss"], abs=1e-6)
    assert merged["merge"]["shard"] == "1/1"


def test_heads_shards_merge_to_one_run(small, capsys, tmp_path):
    whole = run_json(capsys, "heads", "--model", str(MODEL), "--data", str(small), "--json", "--device", "cpu")
    files = []
    for k in range(1, 5):
        files.append(tmp_path / f"heads.{k}.json")
        files[-1].write_text(json.dumps(run_json(capsys, "heads", "--model", str(MODEL), "--data", str(small),
                                                 "--json", "--shard", f"{k}/4", "--device", "cpu")))
    merged = run_json(capsys, "merge", *map(str, files))
    assert merged["n"] == whole["n"] == 14 and merged["tokens"] == whole["tokens"]
    assert merged["base_loss"] == pytest.approx(whole["base_loss"], abs=1e-6)  # other batches: rounding apart
    increase = {(h["kind"], h["layer"], h["head"]): h["loss_increase"] for h in merged["heads"]}
    for h in whole["heads"]:
        assert increase[(h["kind"], h["layer"], h["head"])] == pytest.approx(h["loss_increase"], abs=1e-6)
    roles = {(h["kind"], h["layer"], h["head"]): h for h in merged["roles"]}
    for h in whole["roles"]:
        other = roles[(h["kind"], h["layer"], h["head"])]
        assert other["role"] == h["role"]
        for key in ("same", "previous", "entropy", "aligned"):
            assert other[key] == pytest.approx(h[key], abs=1e-6)


def test_merge_refuses_mixed_or_repeated_shards(tmp_path, capsys):
    a = {"merge": {"kind": "eval", "shard": "1/2", "model": "m"}}
    b = {"merge": {"kind": "heads", "shard": "2/2", "model": "m"}}
    for name, obj in (("a", a), ("b", b)):
        (tmp_path / f"{name}.json").write_text(json.dumps(obj))
    assert cli_main(["merge", str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 2
    assert "different commands" in capsys.readouterr().err
    assert cli_main(["merge", str(tmp_path / "a.json"), str(tmp_path / "a.json")]) == 2
    assert "given twice" in capsys.readouterr().err


def test_bad_shard_is_one_line(capsys, small):
    assert cli_main(["eval", "--model", str(MODEL), "--data", str(small), "--shard", "5/4", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "K/N" in err
