"""Pharaoh alignment links (`0-0 1?2`) and the metrics on them (Och & Ney 2003): precision, recall, AER."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Link = tuple[int, int]  # (source word, target word), 0-based


@dataclass(frozen=True)
class Gold:
    sure: frozenset[Link]
    possible: frozenset[Link]  # sure and possible links: P, with S a subset of P

    def __post_init__(self) -> None:
        if not self.sure <= self.possible:
            raise ValueError("gold: every sure link must also be in the possible set")

    def check(self, n_source: int, n_target: int) -> None:
        """Raise ValueError if a link points past the sentence's words."""
        bad = sorted((i, j) for i, j in self.possible if i >= n_source or j >= n_target)
        if bad:
            i, j = bad[0]
            raise ValueError(f"gold link {i}-{j} is outside the sentence ({n_source} source words, {n_target} "
                             f"target words; indices are 0-based)")


_LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def parse_pharaoh(text: str) -> Gold:
    """`"0-0 1?2 2-1"` -> Gold. `i-j` is sure, `i?j` possible, source index first. A pair given both ways
    is sure. Raises ValueError naming the bad item."""
    sure: set[Link] = set()
    possible: set[Link] = set()
    for k, item in enumerate(text.split()):
        match = _LINK.match(item)
        if not match:
            raise ValueError(f"Pharaoh link {k + 1} {item!r} is not 'i-j' (sure) or 'i?j' (possible) with 0-based "
                             f"integer indices, source first")
        link = (int(match.group(1)), int(match.group(3)))
        possible.add(link)
        if match.group(2) == "-":
            sure.add(link)
    return Gold(frozenset(sure), frozenset(possible))


def format_pharaoh(links: Iterable[Link], possible: Iterable[Link] = ()) -> str:
    """Links as `i-j` (and `possible` ones not in `links` as `i?j`), sorted by target then source word."""
    sure = set(links)
    out = [(j, i, "-") for i, j in sure] + [(j, i, "?") for i, j in set(possible) - sure]
    return " ".join(f"{i}{kind}{j}" for j, i, kind in sorted(out))


@dataclass(frozen=True)
class Counts:
    """|A|, |S|, |A & S|, |A & P|: enough for precision, recall and AER, and summable over sentences."""

    a: int = 0
    s: int = 0
    a_s: int = 0
    a_p: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.a + other.a, self.s + other.s, self.a_s + other.a_s, self.a_p + other.a_p)

    @property
    def precision(self) -> float:
        return self.a_p / self.a if self.a else 0.0

    @property
    def recall(self) -> float:
        return self.a_s / self.s if self.s else 0.0

    @property
    def aer(self) -> float:
        total = self.a + self.s
        return 1.0 - (self.a_s + self.a_p) / total if total else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"aer": self.aer, "precision": self.precision, "recall": self.recall}


def count(predicted: Iterable[Link], gold: Gold) -> Counts:
    a = set(predicted)
    return Counts(len(a), len(gold.sure), len(a & gold.sure), len(a & gold.possible))


def scores(predicted: Iterable[Link], gold: Gold) -> dict[str, float]:
    """Precision, recall and AER of one link set (Och & Ney 2003)."""
    return count(predicted, gold).as_dict()
