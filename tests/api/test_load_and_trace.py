"""attention_lens.load(...).trace(...): the command line's `trace` options as keywords reach the engine as the
same DecodeOptions, the Trace equals the engine's own, bad options are refused in one clear line."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from attention_lens.model.cli import build_parser
from attention_lens.model.engine import DecodeOptions, Trace

import attention_lens
from attention_lens.api import options_from

SOURCE = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."
# `trace` flags that are not options of a run: where the model is and what is read and written.
NOT_RUN_OPTIONS = {"model", "allow_hub", "device", "dtype", "text", "data", "out", "func", "command"}


@pytest.fixture(scope="module")
def model(tiny_ckpt):
    return attention_lens.load(tiny_ckpt, device="cpu")


def trace_parser_options() -> set[str]:
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    return {a.dest for a in sub.choices["trace"]._actions if a.dest != "help"}


def test_every_option_of_the_command_line_trace_is_a_keyword():
    """Of `trace` (one sentence) or `trace_file` (trace --data), or a DecodeOptions field passed on as it is."""
    api_names = set(parameters(attention_lens.Model.trace)) | set(parameters(attention_lens.Model.trace_file))
    api_names |= {f.name for f in dataclasses.fields(DecodeOptions)}
    assert trace_parser_options() - NOT_RUN_OPTIONS - api_names == set()


def parameters(function) -> list[str]:
    import inspect

    return list(inspect.signature(function).parameters)


def test_keywords_become_the_same_options_as_the_command_line():
    args = build_parser().parse_args(["trace", "--model", "m", "--text", "x", "--out", "o.json", "--decode", "beam",
                                      "--beam", "3", "--no-scaling", "--ablate", "cross:1:2", "--lens"])
    options = options_from(None, decode="beam", beam=3, no_scaling=True, ablate="cross:1:2", lens=True)
    assert (options.mode, options.beam_size, options.unscaled, options.ablate, options.lens) == (
        args.decode, args.beam, args.unscaled, tuple(args.ablate), args.lens)
    assert options_from(TARGET, no_causal_mask=True, no_shift=True) == DecodeOptions(
        mode="teacher_forced", causal=False, shift=False)


def test_trace_equals_the_engines_own(model):
    ours = model.trace(SOURCE, decode="beam", beam=3, ablate=["enc:1:1"])
    direct = model.engine.trace(SOURCE, options=DecodeOptions(mode="beam", beam_size=3, ablate=("enc:1:1",)))
    assert ours.target_tokens == direct.target_tokens and len(ours.beams) == 3
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        np.testing.assert_array_equal(getattr(ours, kind), getattr(direct, kind))


def test_a_target_is_teacher_forced_and_switches_reach_the_run(model):
    masked = model.trace(SOURCE, target=TARGET)
    leaky = model.trace(SOURCE, target=TARGET, no_causal_mask=True)
    upper = np.triu(np.ones((masked.m, masked.m), dtype=bool), 1)
    assert masked.decoder_self_attention[..., upper].max() == 0
    assert leaky.decoder_self_attention[..., upper].max() > 0


def test_out_writes_the_trace_and_load_trace_reads_it(model, tmp_path):
    trace = model.trace(SOURCE, out=tmp_path / "t.npz")
    again = attention_lens.load_trace(tmp_path / "t.npz")
    assert isinstance(again, Trace) and again.target_tokens == trace.target_tokens


def test_trace_file_writes_one_trace_per_line(model, tmp_path):
    data = tmp_path / "pairs.tsv"
    data.write_text(f"{SOURCE}\n{SOURCE}\t{TARGET}\n", encoding="utf-8")
    assert model.trace_file(data, tmp_path / "out") == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["0001.json", "0002.json"]
    assert model.trace_file(data, tmp_path / "half", shard="2/2", window=8) == 0
    assert sorted(p.name for p in (tmp_path / "half").iterdir()) == ["0002.json"]


def test_an_unknown_option_is_one_clear_error(model):
    with pytest.raises(TypeError, match="unknown option.*beam_width"):
        model.trace(SOURCE, beam_width=3)
    with pytest.raises(ValueError, match="decode must be"):
        model.trace(SOURCE, decode="nucleus")


def test_a_bad_folder_is_a_checkpoint_error(tmp_path):
    with pytest.raises(attention_lens.CheckpointError, match="no such model folder"):
        attention_lens.load(tmp_path / "nothing")


def test_the_model_reaches_the_engines_members(model):
    assert model.n_heads == model.engine.n_heads and "Model" in repr(model)
