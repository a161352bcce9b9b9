"""`trace --data FILE.tsv --out DIR` and `--text -` (docs/formats.md): one trace per line,
batched, bad lines reported by number with the good ones still traced, standard input read."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from attention_lens.model.cli import main as cli_main
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.trace import Trace

from harness.models.tiny import SOURCES, TARGETS


def test_trace_data_writes_one_trace_per_line(tiny_ckpt, tmp_path, capsys):
    lines = [f"{SOURCES[k % len(SOURCES)]}\t{TARGETS[k % len(TARGETS)]}" if k % 3 == 0 else SOURCES[k % len(SOURCES)]
             for k in range(100)]
    data = tmp_path / "in.tsv"
    data.write_text("\n".join(lines) + "\n")
    out = tmp_path / "traces"
    assert cli_main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(out),
                     "--batch-size", "16"]) == 0
    files = sorted(out.iterdir())
    assert [f.name for f in files] == [f"{k:04d}.json" for k in range(1, 101)]
    first, second = Trace.load(files[0]), Trace.load(files[1])
    assert first.options.mode == "teacher_forced" and second.options.mode == "greedy"
    assert "tracing" in capsys.readouterr().err  # the progress bar


def test_batched_traces_equal_one_by_one(tiny_engine):
    options = DecodeOptions()
    texts, targets = SOURCES[:4], [TARGETS[0], None, TARGETS[2], None]
    for batched, text, target in zip(tiny_engine.trace_batch(texts, targets, options), texts, targets):
        single = tiny_engine.trace(text, target=target, options=options)
        assert batched.target_tokens == single.target_tokens
        np.testing.assert_allclose(batched.cross_attention, single.cross_attention, atol=1e-5)


def test_bad_lines_are_reported_by_number_and_the_rest_traced(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "in.tsv"
    data.write_text(f"{SOURCES[0]}\n\t{TARGETS[0]}\n{SOURCES[1]}\ta\tb\tc\n \u200b \n\n{SOURCES[2]}\n")
    out = tmp_path / "traces"
    assert cli_main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(out)]) == 1
    assert sorted(f.name for f in out.iterdir()) == ["0001.json", "0006.json"]
    err = capsys.readouterr().err
    assert "line 2: error: the source is empty" in err
    assert "line 3: error: expected source" in err
    assert "line 4: error: The source text is empty" in err
    assert "2 line(s) failed" not in err and "3 line(s) failed" in err


@pytest.mark.parametrize("flag", ["--text", "--data"])
def test_standard_input(tiny_ckpt, tmp_path, monkeypatch, flag):
    monkeypatch.setattr("sys.stdin", io.StringIO(f"{SOURCES[1]}\n"))
    out = tmp_path / ("t.json" if flag == "--text" else "dir")
    assert cli_main(["trace", "--model", str(tiny_ckpt), flag, "-", "--out", str(out)]) == 0
    trace = json.loads((out if flag == "--text" else out / "0001.json").read_text())
    assert "".join(trace["source_tokens"]).replace("\u2581", " ").split()[:2] == SOURCES[1].split()[:2]
