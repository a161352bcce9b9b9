"""One parallel sentence with its gold alignment, and the TSV files that hold them."""

from __future__ import annotations

import gzip
import os
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Example:
    source: str  # space-separated tokens, final " ."
    target: str
    gold: str  # Pharaoh: "i-j" sure, "i?j" possible, 0-based, source index first; "" when unknown


def write_tsv(examples: Iterable[Example], path: str | os.PathLike) -> None:
    """`source<TAB>target<TAB>gold`, one example a line, UTF-8."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for ex in examples:
            for name in ("source", "target", "gold"):
                if any(ch in getattr(ex, name) for ch in "\t\n\r"):
                    raise ValueError(f"{name} holds a tab or line break: {getattr(ex, name)!r}")
            f.write(f"{ex.source}\t{ex.target}\t{ex.gold}\n")


def parse_line(line: str, need_target: bool = True) -> Example:
    """One line of a sentence-pair file, `source<TAB>target[<TAB>gold]` (its line break already dropped), ->
    Example; without need_target the target may be left out (`source` alone: target ""). Text is kept as
    written. Raises ValueError with the reason: too many or too few columns, or an empty side."""
    cols = line.split("\t")
    least = 2 if need_target else 1
    if not least <= len(cols) <= 3:
        shape = "source<TAB>target[<TAB>gold]" if need_target else "source[<TAB>target[<TAB>gold]]"
        raise ValueError(f"expected {shape}, got {len(cols)} column(s)")
    if not cols[0].strip():
        raise ValueError("the source is empty")
    target = cols[1] if len(cols) > 1 else ""
    if need_target and not target.strip():
        raise ValueError("the target is empty")
    return Example(cols[0], target if target.strip() else "", cols[2] if len(cols) == 3 else "")


def read_tsv(path: str | os.PathLike) -> list[Example]:
    """Reads `source<TAB>target[<TAB>gold]` lines (parse_line; gold "" when absent); blank lines are skipped. A
    name ending in `.gz` is read through gzip (the shipped Tatoeba files are compressed).

    Raises ValueError naming the file and line for the first line parse_line refuses.
    """
    examples = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            try:
                examples.append(parse_line(line))
            except ValueError as exc:
                raise ValueError(f"{path}:{number}: {exc}: {line[:80]!r}") from None
    return examples
