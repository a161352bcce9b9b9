"""Every script of reports/ is listed in docs/command-line.md's "Reports" (and nothing else is), and imports cleanly:
a report whose import broke, as one did when a function it used was removed, fails here instead of on the day
someone reruns it. Importing runs nothing: each script's work is behind `if __name__ == "__main__"`."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REPORTS = sorted(p.stem for p in (ROOT / "reports").glob("*.py") if p.stem != "__init__")


def listed() -> set[str]:
    """The names in backticks of docs/command-line.md's "Reports" section, up to the next heading."""
    text = (ROOT / "docs" / "command-line.md").read_text(encoding="utf-8")
    section = text.split("\n## Reports\n", 1)[1].split("\n## ", 1)[0]
    return {name for name in re.findall(r"`([a-z_]+)`", section)}


def test_the_docs_list_every_report_and_only_reports():
    assert "aer_readings" in REPORTS  # the folder was found
    assert set(REPORTS) - listed() == set(), "reports missing from docs/command-line.md's Reports"
    assert listed() - set(REPORTS) == set(), "docs/command-line.md's Reports names scripts that do not exist"


@pytest.mark.parametrize("name", REPORTS)
def test_every_report_imports(name):
    module = importlib.import_module(f"reports.{name}")
    assert module.__doc__, f"reports/{name}.py has no docstring saying what it does and how it is run"
