"""`attention-lens` (the installed console script) and `python -m model`: --help names every command, and each
command's --help exits 0 and says what it does, for a user (with an example where this project wrote one)."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from attention_lens.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).parent / "attention-lens"
WITH_EXAMPLES = ("app", "trace", "train", "eval", "corpus", "probe", "heads", "aligner", "symmetrise")


def commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


def test_the_installed_script_lists_every_command():
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "See inside an encoder-decoder translation model" in done.stdout
    missing = [name for name in commands() if f"\n    {name}" not in done.stdout]
    assert missing == []


def test_python_m_model_prints_the_same_help_and_names_every_model_command():
    done = subprocess.run([sys.executable, "-m", "model", "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("usage: python -m model") and "See inside an encoder-decoder" in done.stdout
    assert [n for n in commands() if n not in ("app", "serve") and f"\n    {n}" not in done.stdout] == []
    assert "register(" not in done.stdout and "subparsers" not in done.stdout  # no developer docstring


@pytest.mark.parametrize("name", [n for n in commands() if n != "serve"])
def test_each_command_help_says_what_it_does(name, capsys):
    with pytest.raises(SystemExit) as done:
        main([name, "--help"])
    out = capsys.readouterr().out
    assert done.value.code == 0
    assert out.startswith(f"usage: attention-lens {name}")
    description = commands()[name].description
    assert description and len(description) > 40, f"{name} has no description for users"
    assert " ".join(description.split()[:5]) in " ".join(out.split())
    if name in WITH_EXAMPLES:
        assert "example" in out and f"attention-lens {name}" in out.split("example", 1)[1]


def test_serve_help_is_the_replicas_own():
    done = subprocess.run([str(SCRIPT), "serve", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "--replicas" in done.stdout and "nginx" in done.stdout


def test_an_unknown_command_is_one_clear_error(capsys):
    with pytest.raises(SystemExit) as done:
        main(["tracee"])
    assert done.value.code == 2 and "invalid choice: 'tracee'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, expected", [
    (["app", "--server.port", "8600"], ["-m", "attention_lens.launch", "run", "app/streamlit_app.py",
                                        "--server.headless", "true", "--server.port", "8600"]),
    (["serve", "--replicas", "3"], ["deploy/serve.py", "--replicas", "3"]),
])
def test_app_and_serve_replace_the_process(argv, expected, monkeypatch):
    """exec, as ./run.sh does: a SIGTERM to attention-lens reaches Streamlit / the replicas (a child would be left
    running), and every option after the command is passed on."""
    calls = []

    def execv(path, args):  # records the call; the real one never returns
        calls.append((path, args))
        raise SystemExit(0)

    monkeypatch.setattr("os.execv", execv)
    with pytest.raises(SystemExit):
        main(argv)
    (path, args), = calls
    assert path == sys.executable and args[0] == sys.executable
    assert [a.replace(str(ROOT) + "/", "") for a in args[1:]] == expected
