"""English realisation (source of en-fr, target of de-en)."""

from __future__ import annotations

from .lexicon import TENSE_INDEX, VERBS
from .structure import NP, Clause, Place, Relative
from .tokens import PERIOD, Tok


def noun_phrase(np: NP) -> list[Tok]:
    words = [Tok(a, ((id(np), "adj", a),)) for a in np.adjs] + [Tok(np.noun, ((id(np), "noun"),))]
    det = np.det
    if det == "a" and words[0].text[0] in "aeiou":
        det = "an"
    tokens = [Tok(det, ((id(np), "det"),)), *words]
    if np.of is not None:
        tokens += [Tok("of", ((id(np.of), "of"),)), *noun_phrase(np.of)]
    return tokens


def verb_group(verb: str, tense: str, negated: bool, key: int) -> list[Tok]:
    """`sleeps`, `does not sleep`, `did not sleep`, `will sleep`, `will not sleep`."""
    forms = VERBS[verb].en
    lex, aux, neg = (key, "lex"), (key, "aux"), (key, "neg")
    if tense == "future":
        head = [Tok("will", (aux,))]
    elif negated:
        head = [Tok("does" if tense == "present" else "did", (aux,))]
    else:
        return [Tok(forms[TENSE_INDEX[tense]], (lex,))]
    if negated:
        head.append(Tok("not", (neg,)))
    return [*head, Tok(forms[2], (lex,))]


def place_phrase(place: Place) -> list[Tok]:
    return [Tok(place.prep, ((id(place), "prep"),)), *noun_phrase(place.np)]


def because_clause(c: Clause) -> list[Tok]:
    return [Tok("because", ((id(c), "because"),)), *clause(c)]


def relative(rel: Relative) -> list[Tok]:
    """`that the cat chased`, `that does not sleep under the tree`, `that barked because the cat ran`."""
    that = Tok("that", ((id(rel), "rel"),))
    verb = verb_group(rel.verb, rel.tense, rel.negated, id(rel))
    other = noun_phrase(rel.other) if rel.other is not None else []
    tokens = [that, *other, *verb] if rel.kind == "object" else [that, *verb, *other]
    return tokens + adjuncts(rel.place, rel.because)


def adjuncts(place: Place | None, because: Clause | None) -> list[Tok]:
    """What follows a clause's verb and objects, in order: its place phrase, then its `because` clause."""
    return ((place_phrase(place) if place is not None else [])
            + (because_clause(because) if because is not None else []))


def clause(c: Clause) -> list[Tok]:
    tokens = noun_phrase(c.subject)
    if c.relative is not None:
        tokens += relative(c.relative)
    tokens += verb_group(c.verb, c.tense, c.negated, id(c))
    if c.obj is not None:
        tokens += noun_phrase(c.obj)
    if c.obj_relative is not None:
        tokens += relative(c.obj_relative)
    return tokens + adjuncts(c.place, c.because)


def realise(c: Clause) -> list[Tok]:
    return [*clause(c), Tok(".", (PERIOD,))]
