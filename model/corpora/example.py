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


def decode_line(raw: bytes, name: str, number: int) -> str:
    """One line of a text file as text (its line break kept). ValueError naming the file, the line and the byte
    for bytes that are not UTF-8: every reader of the commands' input files decodes through here."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}, line {number}: not UTF-8 (byte 0x{exc.object[exc.start]:02x}, byte "
                         f"{exc.start + 1} of the line: {exc.reason})") from None


def read_text_lines(path: str | os.PathLike) -> Iterable[tuple[int, str]]:
    """(1-based line number, text without its line break) of a UTF-8 file (`.gz` read through gzip), lazily;
    decode_line's ValueError for a line that is not UTF-8."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        for number, raw in enumerate(f, start=1):
            yield number, decode_line(raw, str(path), number).rstrip("\r\n")


def read_tsv(path: str | os.PathLike) -> list[Example]:
    """Reads `source<TAB>target[<TAB>gold]` lines (parse_line; gold "" when absent); blank lines are skipped. A
    name ending in `.gz` is read through gzip (the shipped Tatoeba files are compressed).

    Raises ValueError naming the file and line for the first line parse_line refuses or that is not UTF-8.
    """
    examples = []
    for number, line in read_text_lines(path):
        if not line.strip():
            continue
        try:
            examples.append(parse_line(line))
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: {exc}: {line[:80]!r}") from None
    return examples
