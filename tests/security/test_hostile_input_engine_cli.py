"""Hardening, engine and command line: whatever a student pastes and whatever file an operator points at, the
answer is a valid trace or a plain refusal (CheckpointError / ModelInputError, exit code 2 with `error: …`), never
a traceback; and nothing in a model folder is ever unpickled or executed."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from attention_lens.model.cli import main as cli_main
from attention_lens.model.engine import CheckpointError, DecodeOptions, ModelInputError
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.trace import Trace

from harness.models import hf_tiny
from tests.fixtures.hostile import INPUTS, Marker, evil_pickle

ROOT = Path(__file__).resolve().parents[2]
torch.set_num_threads(1)

# name -> (text, expected: "empty" | "ok" | "truncated")


@pytest.fixture(scope="module")
def hf_marian(tmp_path_factory) -> Path:
    return hf_tiny.build_marian(tmp_path_factory.mktemp("hard_hf") / "marian")


@pytest.fixture(scope="module")
def engines(tiny_engine, hf_marian):
    return {"builtin": tiny_engine, "marian": load_engine(hf_marian)}


def check_trace(trace: Trace) -> None:
    json.dumps(trace.to_dict())  # serialisable (no lone surrogates, no numpy scalars)
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        rows = getattr(trace, kind).sum(-1)
        assert np.all(np.isfinite(rows))


@pytest.mark.parametrize("family", ["builtin", "marian"])
@pytest.mark.parametrize("name", list(INPUTS))
def test_any_input_gives_a_trace_or_a_plain_message(engines, family, name):
    engine = engines[family]
    text, expected = INPUTS[name]
    opts = DecodeOptions(max_len=8)
    if expected == "empty":
        with pytest.raises(ModelInputError, match="empty"):
            engine.trace(text, options=opts)
        return
    trace = engine.trace(text, options=opts)
    check_trace(trace)
    assert trace.n <= engine.max_source_tokens
    warnings = trace.warnings
    too_long = len(engine.encode_source(engine.normalise(text))[0]) > engine.max_source_tokens
    assert too_long or expected != "truncated"
    if too_long:  # truncated to the model's positions, with a warning that says so
        assert trace.n == engine.max_source_tokens
        assert [w for w in warnings if "truncated" in w] == [w for w in warnings if "does not know" not in w]
        assert len([w for w in warnings if "truncated" in w]) == 1
    else:
        assert all(w.startswith("Words this model does not know") for w in warnings)  # only unknown words named


@pytest.mark.parametrize("family", ["builtin", "marian"])
def test_long_reference_target_is_truncated_with_a_warning(engines, family):
    engine = engines[family]
    trace = engine.trace("the cat sat .", target=" ".join(["chat"] * 300))
    assert trace.m == engine.max_target_tokens
    assert any("reference target" in w and "truncated" in w for w in trace.warnings)
    short = engine.trace("the cat sat .", target="le chat .")
    assert short.warnings == ()


def test_teacher_forcing_with_an_empty_target_is_a_message(tiny_engine):
    with pytest.raises(ModelInputError, match="reference target"):
        tiny_engine.trace("the cat .", target=" \x00 ")


# ---- command line -----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["empty", "nul_only", "paste_100kb", "html_script", "right_to_left", "emoji"])
def test_cli_trace_exit_codes(tiny_ckpt, tmp_path, capsys, name):
    text, expected = INPUTS[name]
    out = tmp_path / "t.json"
    code = cli_main(["trace", "--model", str(tiny_ckpt), "--text", text, "--max-len", "6", "--out", str(out)])
    err = capsys.readouterr().err
    if expected == "empty":
        assert code == 2 and err.startswith("error: ") and "empty" in err
        assert not out.exists()
    else:
        assert code == 0, err
        Trace.load(out)
        assert "warning: " in err or expected != "truncated"


def test_cli_refuses_a_broken_folder_and_undecodable_argv(tmp_path):
    """A real process: invalid UTF-8 in argv (surrogate-escaped by Python) and a corrupt folder, exit code 2."""
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_text("{not json")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(bad), "--text", b"the \xff\xfe cat",
                           "--out", str(tmp_path / "t.json")], cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert proc.returncode == 2
    err = proc.stderr.decode()
    assert err.startswith("error: ") and "Traceback" not in err


def test_cli_bad_text_on_a_good_model_in_a_process(tiny_ckpt, tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = tmp_path / "t.npz"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(tiny_ckpt), "--text",
                           b"<b>the \xff cat</b> \xe2\x80\xae sat", "--max-len", "5", "--out", str(out)],
                          cwd=ROOT, env=env, capture_output=True, timeout=120)
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert Trace.load(out).n > 0


# ---- files --------------------------------------------------------------------------------------------------------
def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _truncate(d: Path) -> None:
    w = d / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 2])


def _garbage(d: Path) -> None:
    (d / "model.safetensors").write_bytes(os.urandom(4096))


def _empty(d: Path) -> None:
    (d / "model.safetensors").write_bytes(b"")


def _pickle_named_safetensors(d: Path) -> None:
    evil_pickle(d / "model.safetensors", d.parent / f"{d.name}.MARKER")


def _config_field(name: str, value):
    def mutate(d: Path) -> None:
        cfg = json.loads((d / "config.json").read_text())
        cfg[name] = value
        (d / "config.json").write_text(json.dumps(cfg))
    return mutate


def _drop(*names: str):
    def mutate(d: Path) -> None:
        for f in d.iterdir():
            if f.name in names or ("*tok" in names and f.name not in ("config.json", "model.safetensors",
                                                                       "generation_config.json")):
                f.unlink()
    return mutate


BROKEN = {
    # name: (base, mutation, words the refusal must contain)
    "builtin_truncated": ("builtin", _truncate, "corrupt or truncated"),
    "builtin_garbage": ("builtin", _garbage, "corrupt or truncated"),
    "builtin_empty_weights": ("builtin", _empty, "corrupt or truncated"),
    "builtin_pickle_named_safetensors": ("builtin", _pickle_named_safetensors, "corrupt or truncated"),
    "builtin_config_d_model": ("builtin", _config_field("d_model", 48), "config.json"),
    "builtin_config_layers": ("builtin", _config_field("n_encoder_layers", 3), "disagrees with the weights"),
    "builtin_config_type": ("builtin", _config_field("d_model", "big"), "d_model"),
    "builtin_no_tokenizer": ("builtin", _drop("source.model"), "source.model is missing"),
    "builtin_card_not_object": ("builtin", lambda d: (d / "card.json").write_text("[1, 2]"), "JSON object"),
    "marian_truncated": ("marian", _truncate, "corrupt or truncated"),
    "marian_garbage": ("marian", _garbage, "corrupt or truncated"),
    "marian_pickle_named_safetensors": ("marian", _pickle_named_safetensors, "corrupt or truncated"),
    "marian_config_d_model": ("marian", _config_field("d_model", 48), "disagrees with the weights"),
    "marian_config_vocab": ("marian", _config_field("vocab_size", 90), "disagrees with the weights"),
    "marian_config_layers": ("marian", _config_field("encoder_layers", 3), "lacks"),
    "marian_config_not_json": ("marian", lambda d: (d / "config.json").write_text("{oops"), "config"),
    "marian_no_tokenizer": ("marian", _drop("*tok"), "no tokenizer"),
    "marian_remote_code": ("marian", _config_field("auto_map", {"AutoModelForSeq2SeqLM": "evil.Model"}), ""),
}


@pytest.fixture(scope="module")
def bases(tiny_ckpt, hf_marian):
    return {"builtin": tiny_ckpt, "marian": hf_marian}


@pytest.mark.parametrize("name", list(BROKEN))
def test_broken_folders_are_refused_plainly(bases, tmp_path, name):
    base, mutate, words = BROKEN[name]
    folder = copy(bases[base], tmp_path / name)
    mutate(folder)
    if name == "marian_remote_code":  # trust_remote_code is never set: the folder's own code never runs
        (folder / "evil.py").write_text(f"open({str(tmp_path / 'RAN')!r}, 'w')\n")
        with contextlib.suppress(CheckpointError):
            load_engine(folder)  # opened with the library's own class, or refused
        assert not (tmp_path / "RAN").exists()
        return
    with pytest.raises(CheckpointError) as info:
        load_engine(folder)
    assert words in str(info.value)
    assert not list(tmp_path.glob("*.MARKER"))


@pytest.mark.parametrize("base", ["builtin", "marian"])
@pytest.mark.parametrize("suffix", [".bin", ".pt", ".ckpt"])
def test_pickle_only_checkpoint_is_refused_and_never_unpickled(bases, tmp_path, base, suffix):
    folder = copy(bases[base], tmp_path / "pickled")
    (folder / "model.safetensors").unlink()
    marker = tmp_path / "MARKER"
    evil_pickle(folder / f"pytorch_model{suffix}", marker)
    with pytest.raises(CheckpointError, match="pickle"):
        load_engine(folder)
    assert not marker.exists()
    code = cli_main(["trace", "--model", str(folder), "--text", "the cat .", "--out", str(tmp_path / "t.json")])
    assert code == 2 and not marker.exists()


def test_a_pickle_beside_safetensors_is_never_read(bases, tmp_path):
    folder = copy(bases["marian"], tmp_path / "both")
    marker = tmp_path / "MARKER"
    evil_pickle(folder / "pytorch_model.bin", marker)
    evil_pickle(folder / "training_args.bin", marker)
    engine = load_engine(folder)
    engine.trace("the cat sat .", options=DecodeOptions(max_len=4))
    assert not marker.exists()


def test_pickled_trace_npz_is_refused(tmp_path):
    marker = tmp_path / "MARKER"
    path = tmp_path / "evil.npz"
    np.savez(path, meta=np.array([Marker(marker)], dtype=object))
    with pytest.raises(ValueError):
        Trace.load(path)
    assert not marker.exists()


def test_empty_folder_file_and_missing_path(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file.safetensors").write_bytes(b"x")
    for spec, words in ((tmp_path / "empty", "empty folder"), (tmp_path / "file.safetensors", "is a file"),
                        (tmp_path / "nowhere", "no such model folder"), ("someone/some-model", "no such model")):
        with pytest.raises(CheckpointError, match=words):
            load_engine(spec)
