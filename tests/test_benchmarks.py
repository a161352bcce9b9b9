"""benchmarks/run_all.py --quick runs every benchmark at tiny sizes and writes its tables (issue 8).

Not a timed test: it asserts that the benchmark runs and reports, never how fast anything is (the numbers of
a quick run mean nothing; benchmarks/RESULTS.md holds the real ones).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from .conftest import ROOT

pytestmark = [pytest.mark.benchmark, pytest.mark.slow]

SECTIONS = ["## 1. Step-through", "## 2. Attention capture", "## 3. Our engine against Hugging Face",
            "## 4. A step click", "## 5. Bytes sent to the browser"]


def test_quick_run_writes_every_table(tmp_path):
    out = tmp_path / "RESULTS.md"
    committed = ROOT / "benchmarks" / "RESULTS.md"
    before = committed.read_bytes() if committed.exists() else None
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run_all.py"), "--quick", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = out.read_text(encoding="utf-8")
    for section in SECTIONS:
        assert section in text
    assert "torch" in text and "cores" in text and "1 thread" in text
    table_rows = [line for line in text.splitlines() if line.startswith("| ") and "---" not in line]
    assert len(table_rows) >= 12  # header + data rows of the five parts
    assert (committed.read_bytes() if committed.exists() else None) == before  # a quick run never overwrites it


def test_train_speed_quick_reports_a_configuration():
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "train_speed.py"), "--quick", "--threads", "1"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    header, row = proc.stdout.strip().splitlines()[-2:]
    assert header.split()[:4] == ["d_model", "d_ff", "layers", "batch"]
    d, ff, layers, batch, params, seconds, pairs = row.split()
    assert (d, ff, layers, batch) == ("64", "128", "1", "16") and float(seconds) > 0 and float(pairs) > 0
