"""Train / valid / test splits with held-out combinations, and one combination split per construction pair.

The test split holds out whole adjective–noun and verb–object pairs: every test sentence contains at
least one pair of `HELD_OUT["test"]`, and no train sentence contains any held-out pair (valid has its own
set), so test scores measure generalisation to new combinations of words that train covers one by one.
None of the held-out pairs occurs in a reference sentence (`sampler.references`).

The combination splits (`combo-neg-rel`, ...) hold out whole combinations of constructions
(`structure.SHAPES`): every sentence of `combo-X` contains combination X and no other held-out
combination or pair, and no train, valid or test sentence contains any of them."""

from __future__ import annotations

import random

from . import english, french, german
from .example import Example
from .sampler import Sampler, references
from .structure import SHAPES, Clause, Combo, admissible, combos, shapes
from .tokens import Tok, gold_links, text

PAIRS = ("en-fr", "de-en")
MAX_TOKENS = 30


def _pairs(kind: str, listing: str) -> frozenset[Combo]:
    """`_pairs("adj", "green bird, old car")` -> {("adj", "green", "bird"), ("adj", "old", "car")}."""
    return frozenset((kind, *pair.split()) for pair in listing.split(","))


# Chosen by hand: every word stays in train, none of the reference sentences' pairs (black cat, chase
# cat / dog / bird, see bird, find bank) is held out, and `old` / `beautiful` keep vowel-initial
# masculine nouns in train (`vieil homme`, `bel oiseau`).
HELD_OUT: dict[str, frozenset[Combo]] = {
    "test": _pairs(
        "adj", "green bird, old car, happy teacher, white horse, small queen, beautiful tree, tired doctor, red apple"
    )
    | _pairs("vo", "eat apple, read letter, open window, love queen, find book, see horse, take car, chase mouse"),
    "valid": _pairs(
        "adj", "black dog, young woman, big window, good book, white mouse, old friend, happy king, green table"
    )
    | _pairs("vo", "eat bread, write book, open door, love king, find child, see tree, take table, chase friend"),
}
ALL_HELD_OUT = HELD_OUT["test"] | HELD_OUT["valid"]


def realise(c: Clause, pair: str) -> tuple[list[Tok], list[Tok]]:
    if pair == "en-fr":
        return english.realise(c), french.realise(c)
    if pair == "de-en":
        return german.realise(c), english.realise(c)
    raise ValueError(f"unknown pair {pair!r}; expected one of {PAIRS}")


def to_example(c: Clause, pair: str) -> Example:
    source, target = realise(c, pair)
    return Example(text(source), text(target), gold_links(source, target))


def generate_structured(
    pair: str, seed: int = 0, n_train: int = 60000, n_valid: int = 1000, n_test: int = 1000,
    n_combo: int | None = None,
) -> dict[str, list[tuple[Example, Clause]]]:
    """`generate`, keeping each example's abstract structure (for tests and statistics)."""
    if pair not in PAIRS:
        raise ValueError(f"unknown pair {pair!r}; expected one of {PAIRS}")
    n_combo = n_test // 2 if n_combo is None else n_combo
    rng = random.Random(f"corpora:{pair}:{seed}")
    sampler = Sampler(rng, pair)
    targets: dict[str, str] = {}  # every source ever realised -> its target: one source, one translation

    def accept(c: Clause, out: list[tuple[Example, Clause]], allowed: frozenset[Combo], shape: str = "") -> None:
        if not admissible(c, pair) or shapes(c, pair) != ({shape} if shape else set()):
            return
        if combos(c) & (ALL_HELD_OUT - allowed):
            return
        ex = to_example(c, pair)
        if max(len(ex.source.split()), len(ex.target.split())) > MAX_TOKENS:
            return
        known = targets.setdefault(ex.source, ex.target)
        if known != ex.target:
            raise AssertionError(f"ambiguous source {ex.source!r}: {known!r} vs {ex.target!r}")
        if ex.source in seen:
            return
        seen.add(ex.source)
        out.append((ex, c))

    def fill(name: str, n: int, draw) -> None:
        for _ in range(1000 * n + 1000):  # de-en combo-rel-obj (future only) needs over 200 a sentence
            if len(splits[name]) >= n:
                return
            draw()
        raise RuntimeError(f"could not draw {n} distinct {name} sentences")

    seen: set[str] = set()
    splits: dict[str, list[tuple[Example, Clause]]] = {"train": [], "valid": [], "test": []}
    splits |= {f"combo-{shape}": [] for shape in SHAPES}
    for c in references():
        accept(c, splits["train"], frozenset())
    assert len(splits["train"]) == len(references()), "a reference sentence uses a held-out pair"
    for name, n in (("test", n_test), ("valid", n_valid)):
        held = sorted(HELD_OUT[name])
        fill(name, n, lambda name=name, held=held: accept(
            sampler.inject(sampler.sentence(), rng.choice(held)), splits[name], HELD_OUT[name]))
    for shape in SHAPES:
        name = f"combo-{shape}"
        fill(name, n_combo, lambda name=name, shape=shape: accept(sampler.sentence(), splits[name], frozenset(), shape))
    fill("train", n_train, lambda: accept(sampler.sentence(), splits["train"], frozenset()))
    rng.shuffle(splits["train"])
    return splits


def generate(
    pair: str, seed: int = 0, n_train: int = 60000, n_valid: int = 1000, n_test: int = 1000,
    n_combo: int | None = None,
) -> dict[str, list[Example]]:
    """Deterministic train / valid / test splits for `pair` ("en-fr" or "de-en") and the combination splits
    `combo-<shape>` (`n_combo` sentences each, by default half of `n_test`); no source sentence occurs
    twice. Train always holds the reference sentences (so it has at least that many)."""
    splits = generate_structured(pair, seed, n_train, n_valid, n_test, n_combo)
    return {name: [ex for ex, _ in items] for name, items in splits.items()}


def first_test_examples(pair: str, n: int) -> list[Example]:
    """The first n examples of the pair's test split (seed 0). The test split is drawn before the train split, so
    this small draw gives the same first n sentences as the full one."""
    return generate(pair, n_train=1, n_valid=1, n_test=n)["test"]
