"""The README and docs/: every relative link resolves (files and #anchors), the README stays short and names no
issue numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = sorted((ROOT / "docs").rglob("*.md"))  # with results/, the logs of measured runs
README_MAX_BYTES = 15_000

LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(text: str) -> list[str]:
    """The lines of a Markdown file outside fenced code blocks."""
    lines, fenced = [], False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            lines.append(line)
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, markup and punctuation dropped, spaces become hyphens."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    found: set[str] = set()
    counts: dict[str, int] = {}
    for line in prose_lines(path.read_text(encoding="utf-8")):
        match = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if not match:
            continue
        base = slug(match.group(1))
        n = counts.get(base, 0)
        counts[base] = n + 1
        found.add(base if n == 0 else f"{base}-{n}")
    return found


def relative_links(path: Path) -> list[str]:
    links = []
    for line in prose_lines(path.read_text(encoding="utf-8")):
        for line_without_code in [re.sub(r"`[^`]*`", "", line)]:
            for target in LINK.findall(line_without_code):
                if not re.match(r"^[a-z][a-z0-9+.-]*:", target, re.IGNORECASE):
                    links.append(target)
    return links


def broken_links(path: Path) -> list[str]:
    broken = []
    for target in relative_links(path):
        file_part, _, anchor = target.partition("#")
        linked = path if not file_part else (path.parent / file_part).resolve()
        if not linked.exists():
            broken.append(f"{target} (no such file)")
        elif anchor and linked.suffix == ".md" and anchor not in anchors(linked):
            broken.append(f"{target} (no heading with that anchor)")
    return broken


@pytest.mark.parametrize("path", [README, *DOCS], ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    broken = broken_links(path)
    assert not broken, f"{path.name}: " + "; ".join(broken)


def test_link_checker_catches_a_missing_file_and_anchor(tmp_path):
    (tmp_path / "other.md").write_text("# A heading: with `code` – and more\n")
    page = tmp_path / "page.md"
    page.write_text(
        "[ok](other.md#a-heading-with-code--and-more) [gone](missing.md) [bad](other.md#nope) "
        "![pic](other.md) [web](https://example.org/x.md)\n```\n[in code](nowhere.md)\n```\n"
    )
    assert broken_links(page) == ["missing.md (no such file)", "other.md#nope (no heading with that anchor)"]


def test_readme_is_short():
    assert len(README.read_bytes()) <= README_MAX_BYTES


def test_readme_names_no_issue_numbers():
    offending = [line for line in README.read_text(encoding="utf-8").splitlines()
                 if re.search(r"\bissues?\s*#?\d+|#\d{1,4}\b", line, re.IGNORECASE)]
    assert offending == []


def test_docs_index_lists_every_document():
    index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
    listed = {Path(target.partition("#")[0]).name for target in relative_links(ROOT / "docs" / "README.md")}
    missing = [p.name for p in DOCS if p.name != "README.md" and p.name not in listed]
    assert index and missing == []
