"""The abstract sentence that every language realises, and the random sampler that builds it.

One sentence is a main `Clause`: subject NP (optionally with a relative clause), verb with tense and
negation, optional object NP, optional place phrase, optional `because` clause. NPs carry up to two
adjectives (one placed before the noun in French, one after) and an optional `of` NP. Concept keys in
the realisers are built from `id()` of these nodes, so a node is never shared between two places."""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from dataclasses import dataclass, field

from .lexicon import ADJECTIVES, NOUNS, PREPOSITIONS, RIVER_BANK, SIT_PREPOSITIONS, TENSES, VERBS, Noun


@dataclass
class NP:
    noun: str
    det: str = "the"  # "the" | "a"
    adjs: list[str] = field(default_factory=list)  # English order; at most one French-before, one after
    of: NP | None = None


@dataclass
class Place:
    prep: str
    np: NP


@dataclass
class Relative:
    """`the dog that the cat chased` (kind "object": `other` is the relative clause's subject) or
    `the cat that sees the bird` (kind "subject": `other` is its object, None for intransitive verbs)."""

    kind: str
    verb: str
    tense: str
    other: NP | None


@dataclass
class Clause:
    subject: NP
    verb: str
    tense: str
    negated: bool = False
    obj: NP | None = None
    place: Place | None = None
    relative: Relative | None = None
    because: Clause | None = None


Combo = tuple[str, str, str]  # ("adj", adjective, noun) or ("vo", verb, object noun)

INTRANSITIVE = tuple(v for v, e in VERBS.items() if not e.transitive)
TRANSITIVE = tuple(v for v, e in VERBS.items() if e.transitive)
BEFORE = tuple(a for a, e in ADJECTIVES.items() if e.fr_before)
AFTER = tuple(a for a, e in ADJECTIVES.items() if not e.fr_before)


def order_adjs(adjs: list[str]) -> list[str]:
    """English and German order: the French-before adjective (size, age, quality) first: `the small black cat`."""
    return sorted(adjs, key=lambda a: not ADJECTIVES[a].fr_before)


# ---------------------------------------------------------------- walking the structure


def clauses(c: Clause) -> Iterator[Clause]:
    yield c
    if c.because is not None:
        yield from clauses(c.because)


def nps(c: Clause) -> Iterator[NP]:
    """Every NP, nested `of` NPs included."""

    def with_of(np: NP | None) -> Iterator[NP]:
        while np is not None:
            yield np
            np = np.of

    for cl in clauses(c):
        yield from with_of(cl.subject)
        yield from with_of(cl.obj)
        if cl.place is not None:
            yield from with_of(cl.place.np)
        if cl.relative is not None:
            yield from with_of(cl.relative.other)


def has_river(c: Clause) -> bool:
    return any(np.noun == "river" for np in nps(c))


def noun_entry(noun: str, river: bool) -> Noun:
    """The bank rule of corpus-spec.md: `bank` is the river bank iff `river` is in the same sentence."""
    return RIVER_BANK if noun == "bank" and river else NOUNS[noun]


def combos(c: Clause) -> set[Combo]:
    """The adjective–noun and verb–object pairs a sentence contains (what the test split holds out)."""
    found: set[Combo] = {("adj", a, np.noun) for np in nps(c) for a in np.adjs}
    for cl in clauses(c):
        if cl.obj is not None:
            found.add(("vo", cl.verb, cl.obj.noun))
        rel = cl.relative
        if rel is not None and rel.kind == "object":
            found.add(("vo", rel.verb, cl.subject.noun))
        if rel is not None and rel.kind == "subject" and rel.other is not None:
            found.add(("vo", rel.verb, rel.other.noun))
    return found


CONSTRUCTIONS = {
    1: "intransitive clause",
    2: "transitive clause",
    3: "place phrase",
    4: "negation",
    5: "object relative clause",
    6: "subject relative clause",
    7: "cause (because)",
    8: "noun phrase with of",
}


def constructions(c: Clause) -> set[int]:
    """Which of the spec's constructions 1-8 a sentence shows (1/2 by its main verb)."""
    found = {2 if VERBS[c.verb].transitive else 1}
    every = list(clauses(c))
    if any(cl.place is not None for cl in every):
        found.add(3)
    if any(cl.negated for cl in every):
        found.add(4)
    if c.relative is not None:
        found.add(5 if c.relative.kind == "object" else 6)
    if c.because is not None:
        found.add(7)
    if any(np.of is not None for np in nps(c)):
        found.add(8)
    return found


def admissible(c: Clause, pair: str) -> bool:
    """Rules out structures whose source sentence would be ambiguous or ungrammatical.

    German (de-en source): a relative pronoun and an NP that are both feminine or neuter look the same
    in nominative and accusative (`die Katze , die die Maus sieht`), so only the subject reading is
    generated for them. A negated indefinite object would need `kein`, which the spec does not list.
    Sentences with `sit` never take `in` (German would need `ins`).
    """
    river = has_river(c)
    for cl in clauses(c):
        if cl.verb == "sit" and cl.place is not None and cl.place.prep not in SIT_PREPOSITIONS:
            return False
        if pair != "de-en":
            continue
        if cl.negated and cl.obj is not None and cl.obj.det == "a":
            return False
        rel = cl.relative
        if rel is not None and rel.kind == "object":
            head = noun_entry(cl.subject.noun, river).de_gender
            other = noun_entry(rel.other.noun, river).de_gender
            if head != "m" and other != "m":
                return False
    return True


# ---------------------------------------------------------------- sampling


class Sampler:
    """Draws random structures. Probabilities favour short sentences while keeping every construction
    of corpus-spec.md at well over 5% of the data."""

    def __init__(self, rng: random.Random, pair: str):
        self.rng = rng
        self.pair = pair

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

    def clause(self, *, main: bool) -> Clause:
        rng = self.rng
        transitive = rng.random() < (0.55 if main else 0.45)
        verb = rng.choice(TRANSITIVE if transitive else INTRANSITIVE)
        tense = rng.choice(TENSES)
        negated = rng.random() < (0.2 if main else 0.12)
        c = Clause(self.np(), verb, tense, negated)
        if transitive:
            c.obj = self.np()
            if negated and self.pair == "de-en":
                c.obj.det = "the"
        if rng.random() < (0.6 if verb == "sit" else 0.28 if main else 0.18):
            c.place = self.place(verb)
        if main:
            r = rng.random()
            if r < 0.34:
                kind = "object" if r < 0.17 else "subject"
                rel_verb = rng.choice(TRANSITIVE if kind == "object" or rng.random() < 0.6 else INTRANSITIVE)
                other = self.np(allow_of=False, max_adjs=1) if VERBS[rel_verb].transitive else None
                c.relative = Relative(kind, rel_verb, rng.choice(TENSES), other)
            if rng.random() < 0.14:
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
        slots: list[tuple[str, Clause]] = []
        for cl in clauses(c):
            if cl.obj is not None:
                slots.append(("obj", cl))
            rel = cl.relative
            if rel is not None and (rel.kind == "object" or rel.other is not None):
                slots.append(("rel", cl))
        if not slots:
            c.verb = word
            c.obj = self.np()
            c.obj.noun = noun
            if c.negated:
                c.obj.det = "the"
            return c
        where, cl = self.rng.choice(slots)
        if where == "obj":
            cl.verb, cl.obj.noun = word, noun
        elif cl.relative.kind == "object":
            cl.relative.verb, cl.subject.noun = word, noun
        else:
            cl.relative.verb, cl.relative.other.noun = word, noun
        return c


# ---------------------------------------------------------------- the classroom presets


def _np(text: str, of: NP | None = None) -> NP:
    """`"the black cat"` -> NP (a tiny reader for the reference sentences below)."""
    det, *adjs, noun = text.split()
    return NP(noun, det, adjs, of)


def references() -> list[Clause]:
    """The reference sentences of corpus-spec.md and of the app's presets, always in train."""
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
