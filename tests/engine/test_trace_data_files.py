"""`trace --data`: the switches of one trace reach every line's trace (--ablate, --contributions were dropped),
a line that is not UTF-8 is named by file, line and byte while the other lines are traced, and the progress bar
says how much time is left."""

from __future__ import annotations

import json

import numpy as np
from attention_lens.model.cli import main as cli_main
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.trace import Trace

from harness.models.tiny import SOURCES, TARGETS


def test_ablate_and_contributions_reach_every_line(tiny_ckpt, tiny_engine, tmp_path):
    data = tmp_path / "in.tsv"
    data.write_text(f"{SOURCES[0]}\n{SOURCES[1]}\t{TARGETS[1]}\n", encoding="utf-8")
    out = tmp_path / "traces"
    assert cli_main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(out),
                     "--ablate", "cross:1:2", "--ablate", "enc:2:*", "--contributions"]) == 0
    options = DecodeOptions(ablate=("cross:1:2", "enc:2:*"), contributions=True)
    for name, source, target in (("0001.json", SOURCES[0], None), ("0002.json", SOURCES[1], TARGETS[1])):
        written = Trace.load(out / name)
        alone = tiny_engine.trace(source, target=target, options=options)
        assert "cross:1:2" in written.options.ablate and "enc:2:4" in written.options.ablate
        assert written.options.ablate == alone.options.ablate
        assert written.contributions is not None
        assert written.target_tokens == alone.target_tokens
        np.testing.assert_allclose(written.cross_attention, alone.cross_attention, atol=1e-5)
        np.testing.assert_allclose(written.contributions["source_share"], alone.contributions["source_share"],
                                   atol=1e-5)
        # the switched-off cross-attention head 1:2 sends nothing: its norm-weighted attention is 0
        assert np.all(written.contributions["norm_weighted"]["cross_attention"][0, 1] == 0)


def test_a_line_that_is_not_utf8_is_named_and_the_others_traced(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "in.tsv"
    data.write_bytes(f"{SOURCES[0]}\n".encode() + b"the caf\xe9 sat \xff .\n" + f"{SOURCES[2]}\n".encode())
    out = tmp_path / "traces"
    assert cli_main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(out)]) == 1
    assert sorted(f.name for f in out.iterdir()) == ["0001.json", "0003.json"]
    err = capsys.readouterr().err
    assert f"line 2: error: {data}, line 2: not UTF-8 (byte 0xe9, byte 8 of the line" in err
    assert "1 line(s) failed" in err and "Traceback" not in err
    json.loads((out / "0003.json").read_text(encoding="utf-8"))


def test_the_progress_bar_says_the_time_left(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "in.tsv"
    data.write_text("\n".join(SOURCES[:3]) + "\n", encoding="utf-8")
    assert cli_main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(tmp_path / "t"),
                     "--batch-size", "1"]) == 0
    err = capsys.readouterr().err
    assert "tracing 100%|" in err and "3/3 [" in err and " elapsed, 00:00 left, " in err
