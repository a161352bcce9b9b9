"""The wheel, as a user installs it: built from this tree, installed into a fresh virtual environment, then run
from a folder outside the repository: `attention-lens trace --model everyday-en-fr` writes a Trace of the model the
wheel carries, and `attention-lens app` serves its first page without an error.

The fresh environment installs the wheel alone (no network, `--no-deps`) and sees this environment's packages
through a .pth line, so torch and Streamlit are reused rather than downloaded; everything of attention_lens it
imports is the wheel's (checked).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
import zipfile
from pathlib import Path

import pytest

from attention_lens import load_trace
from harness.server import ROOT, free_port, stop, wait_healthy
from harness.st_client import Session

# The tree the wheel is built from: what pyproject.toml packages (app/, model/, attention_lens/, and the data it
# picks out of assets/ and checkpoints/), linked rather than copied so the build reads this checkout.
SOURCES = ("app", "model", "attention_lens", "assets", "checkpoints")
MAX_WHEEL_MB = 25


def run(cmd: list[str], cwd: Path, env: dict[str, str] | None = None, timeout: float = 600) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))}\n{(proc.stdout + proc.stderr)[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """A fresh venv with the wheel installed; returns its bin/ folder."""
    top = tmp_path_factory.mktemp("wheel")
    src = top / "src"
    src.mkdir()
    for name in SOURCES:
        (src / name).symlink_to(ROOT / name, target_is_directory=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", str(top / "dist"),
         str(src)], cwd=top)
    (wheel,) = (top / "dist").glob("attention_lens-*.whl")
    assert wheel.stat().st_size <= MAX_WHEEL_MB * 1e6
    names = zipfile.ZipFile(wheel).namelist()
    assert "attention_lens/checkpoints/everyday-en-fr/model.safetensors" in names
    assert not [n for n in names if n.startswith("attention_lens/checkpoints/") and "/everyday-en-fr/" not in n]
    assert "attention_lens/app/streamlit_app.py" in names and "attention_lens/assets/favicon.png" in names
    venv = top / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], cwd=top)
    (site,) = (venv / "lib").glob("python3*/site-packages")
    (site / "_reused_packages.pth").write_text("".join(f"{p}\n" for p in reused_site_packages()))
    run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "-q", "--no-deps",
         "--no-index", str(wheel)], cwd=top)
    return venv / "bin"


def reused_site_packages() -> list[str]:
    """This interpreter's package folders (its venv's site-packages), never the checkout."""
    return sorted({sysconfig.get_paths()[k] for k in ("purelib", "platlib")})


def outside_env() -> dict[str, str]:
    """This environment without the LENS_ settings the test session sets, and without the repository on the path."""
    return {k: v for k, v in os.environ.items() if not k.startswith("LENS_") and k != "PYTHONPATH"}


@pytest.mark.slow
def test_installed_wheel_traces_the_default_model_by_name_from_any_folder(installed, tmp_path):
    where = run([str(installed / "python"), "-c", "import attention_lens.app, attention_lens.model.engine.loader as l; "
                 "print(attention_lens.app.__file__); print(l.find_named('everyday-en-fr'))"],
                cwd=tmp_path, env=outside_env()).split()
    assert all(str(installed.parent) in w for w in where), where  # the wheel's code and model, not the checkout's
    run([str(installed / "attention-lens"), "trace", "--model", "everyday-en-fr", "--text", "Where is the station?",
         "--out", "t.json"], cwd=tmp_path, env=outside_env())
    trace = load_trace(tmp_path / "t.json")
    assert trace.source_tokens and trace.target_tokens
    assert "everyday-en-fr" in json.dumps(trace.model)


@pytest.mark.slow
def test_installed_wheel_serves_the_app_on_the_default_model(installed, tmp_path):
    port = free_port()
    proc = subprocess.Popen([str(installed / "attention-lens"), "app", "--server.port", str(port),
                             "--server.address", "127.0.0.1", "--browser.gatherUsageStats", "false",
                             "--server.fileWatcherType", "none"],
                            cwd=tmp_path, env={**outside_env(), "LENS_WARMUP": "0"}, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc, seconds=120)
        with urllib.request.urlopen(url + "/", timeout=30) as page:
            assert page.status == 200

        async def first_run():
            session = Session(url)
            try:
                return await session.open(), session.page
            finally:
                await session.close()

        first, shown = asyncio.run(first_run())
        assert first.finished is not None and first.problems == []
        assert any("everyday-en-fr" in str(s.element) for s in shown.values())  # the default model is open
    finally:
        stop(proc)
