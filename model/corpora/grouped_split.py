"""Train / valid / test splits of a user's parallel text that keep every sentence on one side of the split.

Tatoeba (and most parallel text people collect) lists one sentence with several translations, and one
translation under several sources: `Run!` -> `Cours !` and `Run!` -> `Courez !`. A random split of the pairs
would put `Run!` in training and in the test, and the test would measure recall. Here pairs that share a
source or a target sentence (compared without case and surplus spaces) form one group, joined transitively,
and a whole group goes to one split: no test source or target sentence appears in training.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

Pair = tuple[str, str]


def _key(text: str) -> str:
    return " ".join(text.split()).casefold()


def sentence_groups(rows: Sequence[Pair]) -> list[list[int]]:
    """Indices of `rows` grouped so that two pairs sharing a source or a target are in one group."""
    parent = list(range(len(rows)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[tuple[int, str], int] = {}
    for i, (src, tgt) in enumerate(rows):
        for side, text in ((0, src), (1, tgt)):
            j = first.setdefault((side, _key(text)), i)
            a, b = find(i), find(j)
            if a != b:
                parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in range(len(rows)):
        groups.setdefault(find(i), []).append(i)
    return list(groups.values())


def split_by_sentence(rows: Sequence[Pair], seed: int, held_fraction: float = 0.05,
                      held_max: int = 3000) -> dict[str, list[Pair]]:
    """valid and test each take about `held_fraction` of the pairs (at most `held_max`, at least 1), whole
    groups at a time; the rest is train. Deterministic for the seed. A group larger than a tenth of a held
    split (and than 4 pairs) stays in train (one very common sentence would otherwise fill the test with its
    variants)."""
    rows = list(rows)
    if len(rows) < 3:
        raise ValueError(f"need at least 3 sentence pairs to train, got {len(rows)}")
    groups = sentence_groups(rows)
    if len(groups) < 3:
        raise ValueError(f"the {len(rows)} pairs share their sentences so much that they form {len(groups)} "
                         "group(s); a test split with no training sentence in it needs at least 3")
    random.Random(seed).shuffle(groups)
    k = max(1, min(held_max, round(len(rows) * held_fraction)))
    largest = max(4, k // 10)
    out: dict[str, list[Pair]] = {"valid": [], "test": [], "train": []}
    for group in groups:
        dest = "train"
        if len(group) <= largest:
            dest = next((name for name in ("valid", "test") if len(out[name]) < k), "train")
        out[dest].extend(rows[i] for i in group)
    for name in ("valid", "test"):  # a tiny file whose groups all exceed `largest`
        if not out[name]:
            raise ValueError(f"could not hold out a {name} split: every group of shared sentences is too large")
    return out


PROJECT = Path(__file__).resolve().parents[2]


@lru_cache(maxsize=4)
def held_out_split(data: str, seed: int) -> dict[str, tuple[Pair, ...]]:
    """The split `train --data FILE --seed S` made (a path relative to the project, as cards record it, or
    absolute); for pages and analyses that measure a model on its own test sentences."""
    from attention_lens.model.corpora.example import read_tsv

    path = Path(data) if Path(data).is_absolute() else PROJECT / data
    rows = [(e.source, e.target) for e in read_tsv(path)]
    return {name: tuple(part) for name, part in split_by_sentence(rows, seed).items()}


def without_seen(splits: dict[str, list[Pair]], seen: Sequence[Pair]) -> tuple[dict[str, list[Pair]], dict[str, int]]:
    """`splits` with every valid and test group (sentence_groups) that shares a source or a target sentence with
    `seen` (another model's training pairs) moved to train, whole, so no held-out sentence is one it saw; the
    pairs moved from each. ValueError when that leaves valid or test empty."""
    keys = {(side, _key(text)) for pair in seen for side, text in enumerate(pair)}
    out = {name: list(rows) for name, rows in splits.items()}
    moved = {}
    for name in ("valid", "test"):
        kept: list[Pair] = []
        for group in sentence_groups(splits[name]):
            pairs = [splits[name][i] for i in group]
            seen_here = any((side, _key(text)) in keys for pair in pairs for side, text in enumerate(pair))
            (out["train"] if seen_here else kept).extend(pairs)
        moved[name] = len(splits[name]) - len(kept)
        if not kept:
            raise ValueError(f"every {name} pair shares a sentence with the start model's training pairs: nothing "
                             f"unseen is left to hold out")
        out[name] = kept
    return out, moved
