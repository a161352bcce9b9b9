"""How often each source word occurred in a model's training text: the evidence behind the rare-word notice
of a model trained on text as people type it (`source_words.tsv` in its checkpoint folder).

A word is a run of letters (with inner apostrophes: `don't`, `aujourd'hui`) or of digits, compared
case-folded, so `Station` and `station` count together.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

WORDS_FILE = "source_words.tsv"
WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+")
MAX_FILE_BYTES = 20_000_000  # far above any real vocabulary's list; a bigger file is refused, not read


def words_of(text: str) -> list[str]:
    """The words of a text as typed (`Where's the station?` -> ["Where's", "the", "station"])."""
    return WORD.findall(text)


def count_words(texts: Iterable[str]) -> Counter[str]:
    return Counter(w.casefold() for text in texts for w in words_of(text))


def write_counts(path: Path, counts: Counter[str]) -> None:
    """`word<TAB>count`, most frequent first (ties alphabetical), UTF-8."""
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    Path(path).write_text("".join(f"{w}\t{n}\n" for w, n in rows), encoding="utf-8")


def read_counts(path: Path) -> dict[str, int]:
    """The counts written by write_counts; ValueError naming the line for anything else."""
    path = Path(path)
    if path.stat().st_size > MAX_FILE_BYTES:
        raise ValueError(f"{path} is {path.stat().st_size:,} bytes; a word list is at most {MAX_FILE_BYTES:,}")
    out: dict[str, int] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        word, sep, count = line.partition("\t")
        if not sep or not count.isdigit() or not word:
            raise ValueError(f"{path}:{number}: expected word<TAB>count, got {line[:80]!r}")
        out[word] = int(count)
    return out
