"""Realised tokens that remember which parts of the abstract sentence they express, and the gold links
that follow from that.

Both sides of a pair are realised from one structure. Every token carries *concepts* (a part of the
structure: a noun, a determiner, a verb's lexical meaning, its auxiliary, a negation ...), each either
sure or possible. Source token i and target token j are linked when they share a concept; the link is
sure when both hold it as sure, possible otherwise (Och & Ney 2003: sure links count for recall, sure
and possible for precision)."""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

Concept = Hashable
PERIOD: Concept = "."


@dataclass(frozen=True)
class Tok:
    text: str
    sure: tuple[Concept, ...] = ()
    possible: tuple[Concept, ...] = ()


def gold_links(source: Sequence[Tok], target: Sequence[Tok]) -> str:
    """Pharaoh links, source index first: `0-0 1-2 2?1`."""
    links = []
    for i, s in enumerate(source):
        s_all = set(s.sure) | set(s.possible)
        for j, t in enumerate(target):
            shared = s_all & (set(t.sure) | set(t.possible))
            if not shared:
                continue
            sure = bool(set(s.sure) & set(t.sure))
            links.append(f"{i}{'-' if sure else '?'}{j}")
    return " ".join(links)


def text(tokens: Sequence[Tok]) -> str:
    return " ".join(t.text for t in tokens)
