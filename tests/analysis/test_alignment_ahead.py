"""align with its passes run ahead on worker threads (--threads 2 on the CPU: model.engine.ahead) gives exactly
what it gives on one thread, one pass at a time: the same JSON, byte for byte, and the same links file; a pass
that fails on a worker ends the command with the one-line error, not a traceback or a hang."""

from __future__ import annotations

import threading

import pytest
import torch
from attention_lens.model.analysis.alignment import run_alignment
from attention_lens.model.analysis.alignment.corpus_stream import FileCorpus
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.cli import main
from attention_lens.model.engine import ModelInputError
from attention_lens.model.engine.stream import Shard

from harness.models.tiny import SOURCES, TARGETS
from tests.analysis.conftest import GOLDS

LINES = [f"{s}\t{t}\t{g}" for s, t, g in zip(SOURCES, TARGETS, GOLDS)] * 5


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory):
    """30 lines (25 with gold), a blank one and one longer than the model reads (skipped)."""
    path = tmp_path_factory.mktemp("ahead") / "gold.tsv"
    path.write_text("\n".join(LINES[:4] + ["", " ".join(["cat"] * 600) + "\tle chat"] + LINES[4:]) + "\n",
                    encoding="utf-8")
    return path


def align(capsys, *args) -> tuple[str, str]:
    assert main(["align", *args, "--json", "--quiet", "--batch-size", "3"]) == 0
    out = capsys.readouterr()
    return out.out, out.err


@pytest.mark.parametrize("method", ["union-plain-mean", "best", "threshold0.2-shift-L2H1"])
def test_passes_run_ahead_give_the_same_json_and_links_byte_for_byte(tiny_ckpt, gold_file, tmp_path, method,
                                                                    capsys):
    common = ["--model", str(tiny_ckpt), "--data", str(gold_file), "--method", method, "--device", "cpu"]
    one, one_err = align(capsys, *common, "--threads", "1", "--out", str(tmp_path / "one.txt"))
    two, two_err = align(capsys, *common, "--threads", "2", "--out", str(tmp_path / "two.txt"))
    assert '"aer"' in one and '"skipped"' in one
    assert two == one
    assert two_err.replace("two.txt", "one.txt") == one_err  # the same skipped lines named
    assert (tmp_path / "two.txt").read_bytes() == (tmp_path / "one.txt").read_bytes()


def test_run_alignment_with_workers_gives_the_same_report(tiny_engine, gold_file):
    def report(workers: int) -> dict:
        corpus = FileCorpus(str(gold_file), Shard(), 4, 64, False)
        return run_alignment(tiny_engine, corpus=corpus, workers=workers).summary()

    assert report(3) == report(0)


def test_a_pass_failing_on_a_worker_is_the_one_line_error(tiny_ckpt, gold_file, monkeypatch, capsys):
    passes = []
    real = BuiltinEngine.cross_attention_batch

    def third_fails(self, srcs, labels, options):
        passes.append(threading.current_thread().name)
        if len(passes) == 3:
            raise ModelInputError("the third pass failed")
        return real(self, srcs, labels, options)

    monkeypatch.setattr(BuiltinEngine, "cross_attention_batch", third_fails)
    before = torch.get_num_threads()
    ended: list[int] = []
    run = threading.Thread(target=lambda: ended.append(main([
        "align", "--model", str(tiny_ckpt), "--data", str(gold_file), "--device", "cpu", "--threads", "2",
        "--batch-size", "2", "--quiet", "--json"])), daemon=True)
    run.start()
    run.join(120)
    assert not run.is_alive(), "align hung after a pass failed on a worker"
    assert ended == [2]
    err = capsys.readouterr().err
    assert err.strip().splitlines() == ["error: the third pass failed"]
    assert all(name.startswith("ahead") for name in passes)
    assert len(passes) <= 3 + 2 + 1  # the passes after it were not started (or were cancelled)
    assert torch.get_num_threads() == before
