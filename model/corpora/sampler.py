"""The random sampler that builds abstract sentences, and the reference sentences that train always holds."""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass

from .lexicon import ADJECTIVES, NOUNS, PREPOSITIONS, SIT_PREPOSITIONS, TENSES, VERBS
from .structure import NP, Clause, Combo, Place, Relative, clauses, nps, order_adjs, relatives

INTRANSITIVE = tuple(v for v, e in VERBS.items() if not e.transitive)
TRANSITIVE = tuple(v for v, e in VERBS.items() if e.transitive)
BEFORE = tuple(a for a, e in ADJECTIVES.items() if e.fr_before)
AFTER = tuple(a for a, e in ADJECTIVES.items() if not e.fr_before)


@dataclass(frozen=True)
class Rates:
    """How often each optional part is drawn."""

    subject_relative: float = 0.32  # on the subject of a main or `because` clause
    object_relative: float = 0.25  # on a main-clause object; a `because` clause's object gets twice as many
    relative_negated: float = 0.2
    relative_place: float = 0.2
    relative_because: float = 0.12  # only a relative clause on the main subject holds one
    because: float = 0.2


class Sampler:
    """Draws random structures. Probabilities favour short sentences while keeping every construction
    of docs/corpus.md at well over 5% of the data."""

    def __init__(self, rng: random.Random, pair: str, rates: Rates | None = None):
        self.rng = rng
        self.pair = pair
        self.rates = rates or Rates()

    def np(self, *, allow_of: bool = True, max_adjs: int = 2) -> NP:
        rng = self.rng
        noun = rng.choice(tuple(NOUNS))
        det = "the" if rng.random() < 0.7 else "a"
        r = rng.random()
        adjs: list[str] = []
        if r < 0.08 and max_adjs >= 2:
            adjs = [rng.choice(BEFORE), rng.choice(AFTER)]
        elif r < 0.42 and max_adjs >= 1:
            adjs = [rng.choice(tuple(ADJECTIVES))]
        of = self.np(allow_of=False, max_adjs=1) if allow_of and rng.random() < 0.07 else None
        return NP(noun, det, adjs, of)

    def place(self, verb: str) -> Place:
        preps = SIT_PREPOSITIONS if verb == "sit" else tuple(PREPOSITIONS)
        return Place(self.rng.choice(preps), self.np())

    def relative(self, *, allow_because: bool) -> Relative:
        rng, rates = self.rng, self.rates
        kind = "object" if rng.random() < 0.5 else "subject"
        verb = rng.choice(TRANSITIVE if kind == "object" or rng.random() < 0.6 else INTRANSITIVE)
        other = self.np(allow_of=False, max_adjs=1) if VERBS[verb].transitive else None
        rel = Relative(kind, verb, rng.choice(TENSES), other, rng.random() < rates.relative_negated)
        if rel.negated and kind == "subject" and other is not None and self.pair == "de-en":
            other.det = "the"  # a negated indefinite object would need `kein`
        if rng.random() < (0.5 if verb == "sit" else rates.relative_place):
            rel.place = self.place(verb)
        if allow_because and rng.random() < rates.relative_because:
            rel.because = self.clause(main=False, nested=True)
        return rel

    def clause(self, *, main: bool, nested: bool = False) -> Clause:
        """`nested`: a `because` clause inside a relative clause, which holds no relative clause itself."""
        rng, rates = self.rng, self.rates
        transitive = rng.random() < (0.55 if main else 0.45)
        verb = rng.choice(TRANSITIVE if transitive else INTRANSITIVE)
        negated = rng.random() < (0.2 if main else 0.12)
        c = Clause(self.np(), verb, rng.choice(TENSES), negated)
        if transitive:
            c.obj = self.np()
            if negated and self.pair == "de-en":
                c.obj.det = "the"
            if not nested and rng.random() < (1 if main else 2) * rates.object_relative:
                c.obj_relative = self.relative(allow_because=False)
        if c.obj_relative is None and rng.random() < (0.6 if verb == "sit" else 0.28 if main else 0.18):
            c.place = self.place(verb)
        if not nested and rng.random() < rates.subject_relative:
            c.relative = self.relative(allow_because=main)
        if main and rng.random() < rates.because:
            c.because = self.clause(main=False)
        return c

    def sentence(self) -> Clause:
        c = self.clause(main=True)
        if self.rng.random() < 0.08:
            self.bank_of_river(c)
        return c

    def bank_of_river(self, c: Clause) -> None:
        """`the bank of the river`, `near the bank of the river`: bank before river, resolved by it."""
        rng = self.rng
        np = NP("bank", "the" if rng.random() < 0.8 else "a", [], NP("river", "the" if rng.random() < 0.85 else "a"))
        if rng.random() < 0.3:
            np.adjs = [rng.choice(tuple(ADJECTIVES))]
        slot = rng.random()
        if slot < 0.5:
            prep = rng.choice(("near", "near", "on", "behind", "under"))
            c.place = Place(prep, np)
            c.obj_relative = None
            if c.verb != "sit" and rng.random() < 0.5:
                c.verb, c.obj = rng.choice(INTRANSITIVE), None
        elif slot < 0.75 and c.obj is not None:
            c.obj = np
            if c.negated:
                np.det = "the"
        else:
            c.subject = np

    def inject(self, c: Clause, combo: Combo) -> Clause:
        """A copy of `c` that contains `combo` (how valid and test sentences get their held-out pair)."""
        c = copy.deepcopy(c)
        kind, word, noun = combo
        if kind == "adj":
            np = self.rng.choice(list(nps(c)))
            np.noun = noun
            np.adjs = order_adjs([a for a in np.adjs if ADJECTIVES[a].fr_before != ADJECTIVES[word].fr_before] + [word])
            return c
        slots: list[tuple[Relative | None, NP, Clause]] = [(None, cl.obj, cl) for cl in clauses(c) if cl.obj]
        for a in relatives(c):
            if a.rel.kind == "object":
                slots.append((a.rel, a.head, a.host))
            elif a.rel.other is not None:
                slots.append((a.rel, a.rel.other, a.host))
        if not slots:
            c.verb = word
            c.obj = self.np()
            c.obj.noun = noun
            if c.negated:
                c.obj.det = "the"
            return c
        rel, np, cl = self.rng.choice(slots)
        np.noun = noun
        if rel is None:
            cl.verb = word
        else:
            rel.verb = word
        return c


# ---------------------------------------------------------------- the classroom presets


def _np(text: str, of: NP | None = None) -> NP:
    """`"the black cat"` -> NP (a tiny reader for the reference sentences below)."""
    det, *adjs, noun = text.split()
    return NP(noun, det, adjs, of)


def references() -> list[Clause]:
    """The reference sentences of docs/corpus.md and of the app's presets, always in train."""
    return [
        Clause(_np("the cat"), "sit", "past"),
        Clause(_np("the black cat"), "sit", "past", place=Place("on", _np("the mat"))),
        Clause(_np("the cat"), "sit", "past", place=Place("on", _np("the mat"))),
        Clause(_np("the dog"), "bark", "past", relative=Relative("object", "chase", "past", _np("the cat"))),
        Clause(_np("the dog"), "chase", "past", obj=_np("the black cat")),
        Clause(_np("the dog"), "sleep", "present", negated=True),
        Clause(_np("the cat"), "see", "past", negated=True, obj=_np("the bird")),
        Clause(_np("the cat"), "sleep", "present", relative=Relative("subject", "see", "present", _np("the bird"))),
        Clause(_np("the dog"), "bark", "present", because=Clause(_np("the cat"), "run", "present")),
        Clause(_np("the dog"), "sit", "past", place=Place("near", _np("the bank", _np("the river")))),
        Clause(_np("the man"), "find", "past", obj=_np("the bank")),
        Clause(_np("the cat"), "chase", "future", obj=_np("the bird")),
    ]
