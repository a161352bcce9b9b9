"""The benchmark suite: `python -m benchmarks.run_all --quick` runs every benchmark at tiny sizes and writes its
tables and rows.

Not a timed test: it asserts that each benchmark runs and reports, never how fast anything is (the numbers of a
quick run mean nothing; benchmarks/RESULTS.md holds the real ones).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from benchmarks import run_all
from tests.fixtures.checkpoints import ROOT

# Modules of benchmarks/ that are not benchmarks: the package and the suite's runner. device_check and
# gpu_train_everyday are scripts for a lent GPU (their CPU rehearsals: device_check --quick,
# tests/builtin/test_train_device.py), too long for the quick suite.
NOT_BENCHMARKS = {"__init__", "run_all", "device_check", "gpu_train_everyday"}
SECTIONS = ["## 1. Step-through", "## 2. Attention capture", "## 3. Our engine against Hugging Face",
            "## 4. A step click", "## 5. Bytes sent to the browser", "## Every other benchmark"]


def test_every_benchmark_module_is_in_the_suite():
    modules = {p.stem for p in (ROOT / "benchmarks").glob("*.py")} - NOT_BENCHMARKS
    assert modules == {b.name for b in run_all.EVERY}
    assert all(b.question.strip() for b in run_all.EVERY)


def test_nothing_in_benchmarks_reports_harness_or_tests_edits_the_import_path():
    """Benchmarks and reports run as modules from the root and pytest puts the root on the path (pyproject.toml)."""
    edit = re.compile("sys" + r"\.path\b")  # spelt in two pieces so that this file does not name it
    offenders = [f"{p.relative_to(ROOT)}:{i}" for folder in ("benchmarks", "reports", "harness", "tests")
                 for p in sorted((ROOT / folder).rglob("*.py"))
                 for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if edit.search(line)]
    assert offenders == []


def test_a_quick_run_never_writes_the_committed_results():
    with pytest.raises(SystemExit):
        run_all.main(["--quick"])


@pytest.mark.benchmark
@pytest.mark.slow
def test_a_quick_run_writes_the_measured_parts_and_a_row_per_benchmark(tmp_path):
    """run_all's own report: parts 1-5 measured in its process and a suite row for a benchmark it ran (each other
    benchmark is run on its own below, so that the test workers share them)."""
    out = tmp_path / "RESULTS.md"
    committed = ROOT / "benchmarks" / "RESULTS.md"
    before = committed.read_bytes()
    proc = subprocess.run([sys.executable, "-m", "benchmarks.run_all", "--quick", "--out", str(out), "--only",
                           "engine_speed", "app_latency", "payload", "train_speed"], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    text = out.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in text
    assert "torch" in text and "cores" in text and "1 thread" in text
    speed_rows = [line for line in text.split("## 4.")[0].splitlines() if re.match(r"\| tiny", line)]
    assert len(speed_rows) == 4  # parts 1-3: two cache lengths, capture, Hugging Face
    assert re.search(r"^\| random weights, tiny \| [\d.]+ ms .*\| [\d.]+ m?s \|", text, re.M)  # server and browser
    assert "| Run to end: grid of cross-attention |" in text  # part 5 measured in Chromium
    rows = {m[1]: m for m in re.finditer(r"^\| `(\w+)` \| .* \| `.*` \| (\d+) \| (\d+) \| `(.*)` \|$", text, re.M)}
    assert set(rows) == {"train_speed"} and rows["train_speed"][2] == "0"
    # train_speed's last line is its one quick configuration: d_model, d_ff, layers, batch, parameters, s, pairs/s
    d, ff, layers, batch, params, seconds, pairs = rows["train_speed"][4].split()
    assert (d, ff, layers, batch) == ("64", "128", "1", "16") and float(seconds) > 0 and float(pairs) > 0
    assert committed.read_bytes() == before  # a quick run never overwrites RESULTS.md


@pytest.mark.benchmark
@pytest.mark.slow
@pytest.mark.parametrize("name", [b.name for b in run_all.SUITE if b.name != "train_speed"])
def test_every_benchmark_runs_quick_and_prints_its_figures(name, tmp_path):
    """Each benchmark of the suite as run_all runs it in a quick run (its quick arguments, a server of its own where
    it drives one, pictures into a temporary folder): exit 0 and a last line of figures."""
    bench = next(b for b in run_all.SUITE if b.name == name)
    code, _seconds, last = run_all.run_module(bench, True, tmp_path)
    assert code == 0, last
    assert last.strip()
