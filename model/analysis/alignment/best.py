"""`--method best`: which sentences the method is chosen on (`chosen_on_split`: separate selection sentences,
the first half of the gold sentences, or, with fewer than 20, all of them), the choice itself over every
weights searched (`choose`), and the per-sentence counts of every method kept aside until it is made (`Spill`)."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attention_lens.model.analysis.alignment.corpus_stream import MemoryCorpus, fits
from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.analysis.alignment.methods import DEFAULT_METHOD, Method
from attention_lens.model.analysis.alignment.scoring import Tally
from attention_lens.model.analysis.alignment.sentence_attention import align_batches
from attention_lens.model.analysis.alignment.words import READINGS

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine import Engine

NO_GOLD = f"no gold links: 'best' cannot choose, so {DEFAULT_METHOD} was used"
NONE_ALIGNED = (f"no sentence with gold links could be aligned (each was skipped): 'best' cannot choose, so "
                f"{DEFAULT_METHOD} was used")


def chosen_on_split(gold_ids: Sequence[int]) -> tuple[frozenset[int], bool]:
    """`best` without selection data: the sentences it is chosen on (the first half of the gold sentences with
    20 or more, else all of them) and whether the figures are then in-sample."""
    if len(gold_ids) >= 20:
        return frozenset(gold_ids[:len(gold_ids) // 2]), False
    return frozenset(gold_ids), True


def choose_on(engine: Engine, select_on: Sequence[Example], tallies: dict[str, Tally], batch_size: int,
              progress: bool, unavailable: dict[str, str]) -> tuple[Method, dict[str, Any]]:
    """`best` chosen on separate selection sentences: every method of every weights in `tallies` (empty, one per
    weights searched, the first always given) counted on them; the method and the report's `selection`.
    `unavailable` gains the weights the model cannot give. ValueError when none of them could be counted."""
    searched = list(tallies)
    pre_corpus = MemoryCorpus(select_on, batch_size, progress, "selection sentence")
    pre_corpus.golds()
    for item in align_batches(engine, pre_corpus.batches(), weights=searched):
        ex = select_on[item.index]
        unavailable.update(item.unavailable)
        if item.attention is not None and ex.gold.strip() and fits(item.attention, ex):
            gold = parse_pharaoh(ex.gold)
            for w, wa in item.readings.items():
                tallies[w].add(wa, gold)
    if tallies[searched[0]].n == 0:
        raise ValueError("no sentence of the selection data has gold links this model could align")
    chosen, per_reading, listed = choose(tallies, unavailable)
    return chosen, {"chosen_on": tallies[searched[0]].n, "per_reading": per_reading, "candidates": listed,
                    "note": "best method chosen on separate selection sentences, scores reported on these"}


def choose_in_corpus(tallies: dict[str, Tally], unavailable: dict[str, str], in_sample: bool,
                     any_gold: bool = False) -> tuple[Method, dict[str, Any]]:
    """`best` chosen on the corpus's own sentences (`tallies`: every weights searched, counted on the chosen-on
    sentences): the method and the report's `selection`; DEFAULT_METHOD when no sentence was counted (`any_gold`:
    the corpus has gold links, so its sentences were skipped rather than without gold)."""
    if next(iter(tallies.values())).n == 0:
        return Method.parse(DEFAULT_METHOD), {"note": NONE_ALIGNED if any_gold else NO_GOLD}
    chosen, per_reading, listed = choose(tallies, unavailable)
    return chosen, {"chosen_on": tallies[chosen.weights].n, "per_reading": per_reading, "candidates": listed,
                    "note": ("best method chosen and scored on the same sentences (fewer than 20 with gold): "
                             "an optimistic, in-sample figure") if in_sample else
                    ("best method chosen on the first half of the gold sentences, scores reported on the "
                     "second half")}


def choose(tallies: dict[str, Tally], unavailable: dict[str, str]) -> tuple[Method, dict[str, Method],
                                                                          list[dict[str, Any]]]:
    """`best` over several weights' tallies of the same sentences: the lowest-AER method of them all (ties: the
    first weights searched), the best of each reading on the chosen weights, and every weights' best (the
    candidates), with the weights the model could not give."""
    listed: list[dict[str, Any]] = []
    chosen: Method | None = None
    for w, tally in tallies.items():
        if w in unavailable or tally.n == 0:
            listed.append({"weights": w, "method": None, "aer": None,
                           "note": unavailable.get(w, "no sentence counted")})
            continue
        pick = tally.best()
        listed.append({"weights": w, "method": pick.name, "aer": tally[pick].aer})
        if chosen is None or tally[pick].aer < tallies[chosen.weights][chosen].aer:
            chosen = pick
    assert chosen is not None  # the first weights is always counted (align_batches raises otherwise)
    return chosen, {r: tallies[chosen.weights].best(r) for r in READINGS}, listed


class Spill:
    """Per-sentence count blocks of every method, kept in a temporary file (memory does not grow with them)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
        self.index = array("q")
        self.possible = array("q")
        self.shape: tuple[int, int] | None = None

    def add(self, index: int, block: np.ndarray, possible: int) -> None:
        self.shape = block.shape
        self.file.write(block.astype(np.int32).tobytes())
        self.index.append(index)
        self.possible.append(possible)

    def rows(self, column: int) -> Iterator[tuple[int, np.ndarray, int]]:
        """(index, counts of method `column`, |P|) for every spilled sentence, in the order added."""
        if self.shape is None:
            return
        self.file.seek(0)
        size = self.shape[0] * self.shape[1] * 4
        for index, possible in zip(self.index, self.possible):
            block = np.frombuffer(self.file.read(size), dtype=np.int32).reshape(self.shape)
            yield index, block[column], possible

    def close(self) -> None:
        self.file.close()

