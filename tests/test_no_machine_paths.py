"""Code, docs and docstrings name no folder of one machine or session (a home under /work, a session's folder
under /tmp, a checker's /check): a reader elsewhere has none of them. Paths are relative to the repository, or
words (`PATH/TO/file`, "a run folder outside the repository"); tests write under pytest's tmp_path. System paths
every Debian machine has (/usr/bin/chromium, /proc/, /dev/) are fine."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# Folders of the checkout that are not the project's own text: the venv, git, caches, ignored data and run outputs.
SKIP = {".venv", ".git", ".pytest_cache", ".ruff_cache", ".hypothesis", "data", "runs", "build", "dist", "tmp",
        "node_modules"}
MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|tmp|check)/")


def text_files() -> list[Path]:
    return sorted(p for p in ROOT.rglob("*") if p.suffix in (".py", ".md") and p.is_file()
                  and not any(part in SKIP or part.endswith(".egg-info") for part in p.relative_to(ROOT).parts))


def machine_paths(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if MACHINE_PATH.search(line)]


def test_the_pattern_finds_machine_paths_and_passes_system_ones():
    work, tmp, check = ("/" + name + "/" for name in ("work", "tmp", "check"))  # split, so this file passes
    found = machine_paths(f"flock -x {work}runs/cpu.lock\nrule {tmp}aer/RULE5.txt\nok\nsee {check}x")
    assert len(found) == 3
    assert machine_paths("/usr/bin/chromium /proc/1/status /dev/null runs/aer/H PATH/TO/x.tsv tmp_path") == []


def test_no_py_or_md_file_names_a_machine_path():
    files = text_files()
    assert ROOT / "README.md" in files and Path(__file__) in files
    found = {str(p.relative_to(ROOT)): hits for p in files if (hits := machine_paths(p.read_text("utf-8")))}
    assert found == {}
