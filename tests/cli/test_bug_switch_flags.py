"""The three bug switches as arguments of `python -m model trace` (model/cli), like --no-causal-mask
and --no-shift: each reaches the run, the written Trace shows what the bug computes, a line on stderr measures
it, the swapped cross-attention's error on unequal lengths is one line (no traceback), and a Hugging Face model
refuses every switch with its reason."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
from attention_lens.model.analysis.bug_meters import equal_length_target, row_sums, sharpness
from attention_lens.model.cli import main
from attention_lens.model.engine import Trace

from harness.models import hf_tiny
from tests.fixtures.checkpoints import ROOT

SOURCE = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."
FLAGS = ("--mask-after-softmax", "--swap-cross", "--no-scaling")


def trace(ckpt, out, *extra: str, target: str | None = TARGET) -> int:
    args = ["trace", "--model", str(ckpt), "--text", SOURCE, "--out", str(out), *extra]
    return main(args + (["--target", target] if target is not None else []))


def test_help_lists_the_three_switches(capsys):
    with pytest.raises(SystemExit):
        main(["trace", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    for flag in FLAGS:
        assert flag in out
    assert "sqrt(d_k)" in out and "after the softmax" in out and "(memory, x, x)" in out


def test_mask_after_softmax_flag(tiny_ckpt, tmp_path, capsys):
    assert trace(tiny_ckpt, tmp_path / "h.json") == 0
    assert trace(tiny_ckpt, tmp_path / "b.json", "--mask-after-softmax") == 0
    err = capsys.readouterr().err
    assert "mask after the softmax: decoder self-attention rows sum to" in err
    healthy, bug = Trace.load(tmp_path / "h.json"), Trace.load(tmp_path / "b.json")
    assert bug.to_dict()["options"]["mask_after_softmax"] is True
    assert "mask_after_softmax" not in healthy.to_dict()["options"]
    meter, m = row_sums(bug), bug.m
    assert (meter.sums[..., : m - 1] < 1 - 1e-3).all()  # every row with a masked key lost that key's share
    np.testing.assert_allclose(meter.sums[..., m - 1], 1.0, atol=1e-6)  # the last row masks nothing
    assert meter.max_future == 0.0  # masked weights exactly zero...
    np.testing.assert_allclose(bug.encoder_self_attention.sum(-1), 1.0, atol=1e-6)  # ...and nothing else touched
    np.testing.assert_allclose(bug.cross_attention.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(row_sums(healthy).sums, 1.0, atol=1e-6)
    # With the causal mask off as well there is nothing to mask: the future keeps its weight, rows sum to 1.
    assert trace(tiny_ckpt, tmp_path / "o.json", "--mask-after-softmax", "--no-causal-mask") == 0
    open_rows = row_sums(Trace.load(tmp_path / "o.json"))
    assert open_rows.max_future > 0.01
    np.testing.assert_allclose(open_rows.sums, 1.0, atol=1e-6)


def test_swap_cross_flag_errors_on_unequal_lengths_and_traces_equal_ones(tiny_ckpt, tiny_engine, tmp_path, capsys):
    n = len(tiny_engine.prepare_source(SOURCE)[1])
    m = len(tiny_engine.prepare_target(TARGET)[0])
    assert n != m
    assert trace(tiny_ckpt, tmp_path / "u.json", "--swap-cross") == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Cross-attention with its arguments swapped, (memory, x, x)")
    assert f"the queries are the {n} source positions" in err and f"decoder's {m} rows" in err
    assert err.count("\n") == 1 and not (tmp_path / "u.json").exists()
    equal = equal_length_target(tiny_engine, SOURCE, TARGET)
    assert trace(tiny_ckpt, tmp_path / "h.json", target=equal) == 0
    assert trace(tiny_ckpt, tmp_path / "e.json", "--swap-cross-attention", target=equal) == 0
    assert "cross-attention swapped: " in capsys.readouterr().err
    healthy, bug = Trace.load(tmp_path / "h.json"), Trace.load(tmp_path / "e.json")
    assert bug.options.swap_cross is True and bug.cross_attention.shape == (2, 4, n, n)
    assert np.abs(bug.cross_attention - healthy.cross_attention).max() > 0.05
    # Free running: one decoder row at the first step, so the error, with what to do instead.
    assert trace(tiny_ckpt, tmp_path / "f.json", "--swap-cross", target=None) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "decoder's 1 row " in err and "give --target" in err


def test_swap_cross_error_from_the_real_command_has_no_traceback(tiny_ckpt, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(tiny_ckpt), "--text", SOURCE,
                           "--target", TARGET, "--swap-cross", "--out", str(tmp_path / "t.json")],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: Cross-attention with its arguments swapped")
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1


def test_swap_cross_with_data_traces_the_equal_lines_and_names_the_others(tiny_ckpt, tiny_engine, tmp_path, capsys):
    equal = equal_length_target(tiny_engine, SOURCE, TARGET)
    data = tmp_path / "d.tsv"
    data.write_text(f"{SOURCE}\t{TARGET}\n{SOURCE}\t{equal}\n", encoding="utf-8")
    assert main(["trace", "--model", str(tiny_ckpt), "--data", str(data), "--out", str(tmp_path / "out"),
                 "--swap-cross"]) == 1
    err = capsys.readouterr().err
    assert "line 1: error: Cross-attention with its arguments swapped" in err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["0002.json"]
    assert Trace.load(tmp_path / "out" / "0002.json").options.swap_cross is True


def test_no_scaling_flag_lowers_the_mean_row_entropy(tiny_ckpt, tmp_path, capsys):
    assert trace(tiny_ckpt, tmp_path / "h.json") == 0
    assert trace(tiny_ckpt, tmp_path / "b.json", "--no-scaling") == 0
    err = capsys.readouterr().err
    assert "no 1/sqrt(d_k) scaling, cross attention: mean row entropy" in err and "(healthy " in err
    healthy, bug = Trace.load(tmp_path / "h.json"), Trace.load(tmp_path / "b.json")
    assert bug.to_dict()["options"]["unscaled"] is True and "unscaled" not in healthy.to_dict()["options"]
    before, after = sharpness(healthy), sharpness(bug)
    for kind in before.entropy:
        assert after.entropy[kind] < before.entropy[kind], kind
        assert after.top_weight[kind] > before.top_weight[kind], kind
    # --unscaled is the same switch; free running takes it too.
    assert trace(tiny_ckpt, tmp_path / "f.json", "--unscaled", "--max-len", "4", target=None) == 0
    np.testing.assert_allclose(Trace.load(tmp_path / "f.json").encoder_self_attention, bug.encoder_self_attention,
                               atol=1e-6)


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return hf_tiny.build_marian(tmp_path_factory.mktemp("hf") / "marian")


@pytest.mark.parametrize("flag", FLAGS)
@pytest.mark.parametrize("data", [False, True])
def test_hugging_face_refuses_each_switch_in_one_line(marian, tmp_path, capsys, flag, data):
    if data:
        tsv = tmp_path / "d.tsv"
        tsv.write_text("the cat sat .\tle chat .\nthe cat .\n", encoding="utf-8")
        args = ["trace", "--model", str(marian), "--data", str(tsv), "--out", str(tmp_path / "out"), flag]
    else:
        args = ["trace", "--model", str(marian), "--text", "the cat sat .", "--target", "le chat .",
                "--out", str(tmp_path / "t.json"), flag]
    assert main(args) == 2
    err = capsys.readouterr().err
    line = [x for x in err.splitlines() if x.startswith("error:")]
    assert len(line) == 1 and line[0].startswith("error: Not possible for this model family") and "Traceback" not in err
    assert not (tmp_path / "t.json").exists() and not (tmp_path / "out").exists()


@pytest.mark.parametrize(("doc", "section"), [("docs/command-line.md", "## Commands"),
                                              ("docs/formats.md", "## Command line")])
def test_the_run_switches_are_documented_where_the_cli_is(doc, section):
    """Every switch of a run that `trace` takes (the mask and shift, and the three bugs) is in the command table
    of docs/command-line.md and docs/formats.md, as the parser spells it."""
    from attention_lens.model.cli import build_parser

    trace_parser = build_parser()._subparsers._group_actions[0].choices["trace"]
    flags = {s for a in trace_parser._actions for s in a.option_strings}
    text = (ROOT / doc).read_text(encoding="utf-8")
    table = text.split(section, 1)[1].split("\n## ", 1)[0]
    for flag in ("--no-causal-mask", "--no-shift", *FLAGS):
        assert flag in flags, flag
        assert re.search(rf"(?<![\w-]){flag}(?![\w-])", table), (doc, flag)


def probe_json(ckpt, capsys, *extra: str, target: str = TARGET) -> dict:
    assert main(["probe", "--model", str(ckpt), "--text", SOURCE, "--target", target, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_probe_takes_the_switches_and_finds_the_leaks_a_zero_weight_hides(tiny_ckpt, tiny_engine, capsys):
    """The mask after the softmax puts exactly 0 weight on later positions, yet rows were divided by a sum over
    every key: perturbing later labels moves earlier logits (the probe says LEAKS). The swapped cross-attention
    (equal lengths) hands source row i what target positions after i hold: it leaks too. No scaling does not."""
    healthy = probe_json(tiny_ckpt, capsys)
    assert not healthy["leaks"] and healthy["bugs"] == []
    after = probe_json(tiny_ckpt, capsys, "--mask-after-softmax")
    assert after["leaks"] and after["max_past_logit_change"] > 1e-2 and after["bugs"] == ["mask_after_softmax"]
    assert after["future_attention_mass"] == 0.0
    unscaled = probe_json(tiny_ckpt, capsys, "--no-scaling")
    assert not unscaled["leaks"] and unscaled["bugs"] == ["unscaled"]
    equal = equal_length_target(tiny_engine, SOURCE, TARGET)
    swapped = probe_json(tiny_ckpt, capsys, "--swap-cross", target=equal)
    assert swapped["leaks"] and swapped["bugs"] == ["swap_cross"]
    assert main(["probe", "--model", str(tiny_ckpt), "--text", SOURCE, "--target", TARGET, "--swap-cross"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: Cross-attention with its arguments swapped") and err.count("\n") == 1
    assert main(["probe", "--model", str(tiny_ckpt), "--text", SOURCE, "--target", TARGET,
                 "--mask-after-softmax"]) == 0
    assert "mask after the softmax)" in capsys.readouterr().err


def test_probe_refuses_an_unknown_switch(tiny_engine):
    from attention_lens.model.analysis.probe import probe

    with pytest.raises(ValueError, match="unknown bug switches"):
        probe(tiny_engine, SOURCE, TARGET, bugs=("no_mask",))


@pytest.mark.parametrize("flag", FLAGS)
def test_hugging_face_refuses_each_switch_in_the_probe(marian, capsys, flag):
    assert main(["probe", "--model", str(marian), "--text", "the cat sat .", "--target", "le chat .", flag]) == 2
    err = capsys.readouterr().err
    assert "error: Not possible for this model family" in err and "Traceback" not in err


def test_no_scaling_on_a_model_trained_without_it_says_it_changes_nothing(tmp_path, capsys):
    from harness.models.tiny import build_tiny_checkpoint
    from tests.fixtures.checkpoints import edit_card

    ckpt = edit_card(build_tiny_checkpoint(tmp_path / "ns", seed=3, scaled=False), variant="no-scaling")
    assert trace(ckpt, tmp_path / "plain.json") == 0
    assert trace(ckpt, tmp_path / "flag.json", "--no-scaling") == 0
    assert "trained without the scaling and always runs without it, so the switch changes nothing" in \
        capsys.readouterr().err
    plain, flag = Trace.load(tmp_path / "plain.json"), Trace.load(tmp_path / "flag.json")
    np.testing.assert_array_equal(plain.encoder_self_attention, flag.encoder_self_attention)
    np.testing.assert_array_equal(plain.cross_attention, flag.cross_attention)
