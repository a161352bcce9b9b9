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


def read_tsv(path: str | os.PathLike) -> list[Example]:
    """Reads `source<TAB>target[<TAB>gold]` lines (gold "" when absent); blank lines are skipped. A name
    ending in `.gz` is read through gzip (the shipped Tatoeba files are compressed).

    Raises ValueError naming the line for a line without exactly 2 or 3 columns or with an empty side.
    """
    examples = []
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, start=1):
            line = line.rstrip("\r\n")
            if not line.strip():
                continue
            cols = line.split("\t")
            if len(cols) not in (2, 3) or not cols[0].strip() or not cols[1].strip():
                raise ValueError(
                    f"{path}:{number}: expected source<TAB>target[<TAB>gold], got {len(cols)} column(s): {line[:80]!r}"
                )
            examples.append(Example(cols[0], cols[1], cols[2] if len(cols) == 3 else ""))
    return examples
