"""The abstract sentence that every language realises, and the walks over it.

One sentence is a main `Clause`: subject NP, verb with tense and negation, optional object NP, optional
place phrase, optional `because` clause. The subject and the object may each carry a relative clause
(`Clause.relative`, `Clause.obj_relative`); a relative clause has its own tense, negation, other NP and
place phrase, and one on the main subject may hold a `because` clause. NPs carry up to two adjectives
(one placed before the noun in French, one after) and an optional `of` NP. Concept keys in the realisers
are built from `id()` of these nodes, so a node is never shared between two places. The word-order and
nesting choices are written down in README.md beside this file."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from .lexicon import ADJECTIVES, NOUNS, RIVER_BANK, SIT_PREPOSITIONS, VERBS, Noun


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
    negated: bool = False
    place: Place | None = None
    because: Clause | None = None


@dataclass
class Clause:
    subject: NP
    verb: str
    tense: str
    negated: bool = False
    obj: NP | None = None
    place: Place | None = None
    relative: Relative | None = None  # on the subject
    because: Clause | None = None
    obj_relative: Relative | None = None  # on the object


Combo = tuple[str, str, str]  # ("adj", adjective, noun) or ("vo", verb, object noun)


def order_adjs(adjs: list[str]) -> list[str]:
    """English and German order: the French-before adjective (size, age, quality) first: `the small black cat`."""
    return sorted(adjs, key=lambda a: not ADJECTIVES[a].fr_before)


# ---------------------------------------------------------------- walking the structure


@dataclass(frozen=True)
class Attached:
    """A relative clause where it stands: its host clause, its head NP, and whether the head is the host's
    object (`the king finds the door that a woman opened`) rather than its subject."""

    host: Clause
    head: NP
    rel: Relative
    on_object: bool


def clauses(c: Clause) -> Iterator[Clause]:
    """Every clause: the main one, `because` clauses, and `because` clauses inside relative clauses."""
    yield c
    for rel in (c.relative, c.obj_relative):
        if rel is not None and rel.because is not None:
            yield from clauses(rel.because)
    if c.because is not None:
        yield from clauses(c.because)


def relatives(c: Clause) -> Iterator[Attached]:
    for cl in clauses(c):
        if cl.relative is not None:
            yield Attached(cl, cl.subject, cl.relative, False)
        if cl.obj_relative is not None:
            yield Attached(cl, cl.obj, cl.obj_relative, True)


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
    for a in relatives(c):
        yield from with_of(a.rel.other)
        if a.rel.place is not None:
            yield from with_of(a.rel.place.np)


def has_river(c: Clause) -> bool:
    return any(np.noun == "river" for np in nps(c))


def noun_entry(noun: str, river: bool) -> Noun:
    """The bank rule of docs/corpus.md: `bank` is the river bank iff `river` is in the same sentence."""
    return RIVER_BANK if noun == "bank" and river else NOUNS[noun]


def combos(c: Clause) -> set[Combo]:
    """The adjective–noun and verb–object pairs a sentence contains (what the test split holds out)."""
    found: set[Combo] = {("adj", a, np.noun) for np in nps(c) for a in np.adjs}
    for cl in clauses(c):
        if cl.obj is not None:
            found.add(("vo", cl.verb, cl.obj.noun))
    for a in relatives(c):
        if a.rel.kind == "object":
            found.add(("vo", a.rel.verb, a.head.noun))
        elif a.rel.other is not None:
            found.add(("vo", a.rel.verb, a.rel.other.noun))
    return found


SHAPES = {
    "neg-rel": "a negated object relative clause in the future: `the mouse that the king will not find`",
    "place-rel": "a place phrase inside a subject relative on an object: `the king finds the cat that sleeps on the "
                 "mat`",
    "rel-obj": "an object relative on the object of a `because` clause: `because the girl reads the book that the "
               "teacher wrote` (de-en: in the future only)",
    "rel-because": "a subject relative on the subject of a `because` clause: `because the cat that sees the bird "
                   "runs` (de-en: in the future only)",
}


def shapes(c: Clause, pair: str) -> set[str]:
    """Which construction combinations of `SHAPES` a sentence contains (what the combination splits hold out).

    Each is a combination whose parts all occur together in train in every other pairing (README.md
    beside this file): negated object relatives in the present and past, negated subject relatives and
    future object relatives; place phrases in subject relatives on subjects and in object relatives;
    object relatives on main-clause objects and subject relatives on `because`-clause objects; object
    relatives on `because`-clause subjects and subject relatives on main subjects. So every part is
    learnt and only the combination is new.

    In de-en, `rel-obj` and `rel-because` hold out future relatives only, as `neg-rel` holds out only future
    negated object relatives: German tells a subject relative from an object relative by case alone (`der
    den Arzt schreibt` / `den der Arzt schreibt`, same order), and with the whole cells held out a `because`
    clause's subject only ever carried object relatives in train and its object only subject relatives, so
    there position alone predicted the type, and the models learnt the position (README.md beside this
    file)."""
    found = set()
    for a in relatives(c):
        in_because = a.host is not c  # every clause but the main one is a `because` clause
        if a.rel.kind == "object" and a.rel.negated and a.rel.tense == "future":
            found.add("neg-rel")
        if a.rel.kind == "subject" and a.rel.place is not None and a.on_object:
            found.add("place-rel")
        tense_held = pair != "de-en" or a.rel.tense == "future"  # de-en holds out only the future ones
        if a.rel.kind == "object" and a.on_object and in_because and tense_held:
            found.add("rel-obj")
        if a.rel.kind == "subject" and not a.on_object and in_because and tense_held:
            found.add("rel-because")
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
    rels = [a.rel for a in relatives(c)]
    if any(cl.place is not None for cl in every) or any(r.place is not None for r in rels):
        found.add(3)
    if any(cl.negated for cl in every) or any(r.negated for r in rels):
        found.add(4)
    found |= {5 if r.kind == "object" else 6 for r in rels}
    if len(every) > 1:
        found.add(7)
    if any(np.of is not None for np in nps(c)):
        found.add(8)
    return found


def _sit_ok(verb: str, place: Place | None) -> bool:
    return verb != "sit" or place is None or place.prep in SIT_PREPOSITIONS


def admissible(c: Clause, pair: str) -> bool:
    """Rules out structures whose source sentence would be ambiguous or ungrammatical.

    Every language: sentences with `sit` never take `in` (German would need `ins`); a clause whose object
    has a relative clause takes no place phrase of its own (`... the door that a woman opened in the
    house` would be ambiguous); only a relative clause on the main subject holds a `because` clause.
    German (de-en source): a relative pronoun and an NP that are both feminine or neuter look the same
    in nominative and accusative (`die Katze , die die Maus sieht`), so only the subject reading is
    generated for them. A negated indefinite object would need `kein`, which the spec does not list.
    """
    river = has_river(c)
    for cl in clauses(c):
        if not _sit_ok(cl.verb, cl.place) or (cl.obj_relative is not None and cl.place is not None):
            return False
        if pair == "de-en" and cl.negated and cl.obj is not None and cl.obj.det == "a":
            return False
    for a in relatives(c):
        rel = a.rel
        if not _sit_ok(rel.verb, rel.place):
            return False
        if rel.because is not None and (a.host is not c or a.on_object):
            return False
        if pair != "de-en":
            continue
        if rel.kind == "subject" and rel.negated and rel.other is not None and rel.other.det == "a":
            return False
        if rel.kind == "object":
            head = noun_entry(a.head.noun, river).de_gender
            other = noun_entry(rel.other.noun, river).de_gender
            if head != "m" and other != "m":
                return False
    return True
