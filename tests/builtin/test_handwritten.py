"""The shipped healthy models translate exactly a fixed list of sentences written by hand from docs/corpus.md
(tests/data/handwritten.tsv), at least five for each construction combination docs/corpus.md allows."""

from __future__ import annotations

from collections import Counter
from functools import cache
from pathlib import Path

import pytest
from attention_lens.model.analysis.scores import translate_all
from attention_lens.model.builtin.engine import BuiltinEngine

from tests.fixtures.checkpoints import ROOT

LIST = Path(__file__).parent / "data" / "handwritten.tsv"
COMBINATIONS = ("neg-rel", "place-rel", "rel-obj", "rel-because")


def rows() -> list[tuple[str, str, str, str]]:
    lines = [line for line in LIST.read_text(encoding="utf-8").splitlines() if line and not line.startswith("#")]
    return [tuple(line.split("\t")) for line in lines]


@cache
def translations(pair: str) -> dict[str, str]:
    folder = ROOT / "checkpoints" / pair
    if not (folder / "card.json").is_file():
        pytest.skip(f"checkpoints/{pair} is not shipped in this checkout")
    engine = BuiltinEngine.load(folder)
    sources = [src for p, _, src, _ in rows() if p == pair]
    return dict(zip(sources, translate_all(engine, sources)))


def test_the_list_covers_every_combination_in_both_pairs():
    table = rows()
    assert len(table) >= 40
    assert all(len(row) == 4 and row[0] in ("en-fr", "de-en") and row[1] in COMBINATIONS for row in table)
    counts = Counter(combination for _, combination, _, _ in table)
    assert all(counts[c] >= 5 for c in COMBINATIONS), counts
    for pair in ("en-fr", "de-en"):
        per_pair = Counter(c for p, c, _, _ in table if p == pair)
        assert all(per_pair[c] >= 5 for c in COMBINATIONS), (pair, per_pair)
    assert len({(p, src) for p, _, src, _ in table}) == len(table)


@pytest.mark.parametrize(("pair", "combination", "source", "expected"), rows(),
                         ids=[f"{p}:{c}:{i}" for i, (p, c, _, _) in enumerate(rows())])
def test_shipped_model_translates_exactly(pair, combination, source, expected):
    assert " ".join(translations(pair)[source].split()) == expected
