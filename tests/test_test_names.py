"""Tests and benchmarks are named and documented for what they check, not for the ticket or the day that asked for
it: no file name under tests/ says "issue", "defects" or "hardening", and no docstring or comment in tests/ or
benchmarks/ names an issue number or a date."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted(p for d in ("tests", "benchmarks") for p in (ROOT / d).rglob("*.py"))
ISSUE = re.compile(r"\b[Ii]ssues? *#? *\d+|\b[Ii]ssue_\d+")
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
NAMED_AFTER_A_TICKET = re.compile(r"issue|defect|hardening", re.IGNORECASE)


def prose(source: str) -> list[tuple[int, str]]:
    """(line, text) of every docstring and comment of a Python source."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc is not None:
                out.append((node.body[0].lineno, doc))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            out.append((tok.start[0], tok.string))
    return out


def test_no_test_file_is_named_after_a_ticket():
    named = [str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("*")
             if NAMED_AFTER_A_TICKET.search(p.name)]
    assert not named


@pytest.mark.parametrize("path", SOURCES, ids=[str(p.relative_to(ROOT)) for p in SOURCES])
def test_no_docstring_or_comment_names_an_issue_number_or_a_date(path):
    found = [f"{path.relative_to(ROOT)}:{line}: {m.group(0)}" for line, text in prose(path.read_text(encoding="utf-8"))
             for m in (*ISSUE.finditer(text), *DATE.finditer(text))]
    assert not found


def test_the_checks_catch_what_they_look_for():
    source = '"""Issue 27\'s defects."""\n\ndef f():\n    """Measured 2026-12-04."""\n    return 1  # issue 31\n'
    hits = [m.group(0) for _, text in prose(source) for m in (*ISSUE.finditer(text), *DATE.finditer(text))]
    assert sorted(hits) == ["2026-12-04", "Issue 27", "issue 31"]
    assert NAMED_AFTER_A_TICKET.search("test_page_defects.py") and not NAMED_AFTER_A_TICKET.search("test_page.py")
