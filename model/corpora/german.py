"""German realisation (source of de-en): case declension of articles and adjectives (weak after `der`,
mixed after `ein`), capitalised nouns, genitive `of` (`das Ufer des Flusses`), `im`, verb second in main
clauses, verb last in `weil` and relative clauses set off by ` , ` (an object's relative clause extraposed),
`wird ... schlafen`, `setzte sich`, `nicht` after the object (`die Katze sah den Vogel nicht .`)."""

from __future__ import annotations

from .lexicon import ADJECTIVES, DE_TWO_WAY, PREPOSITIONS, TENSE_INDEX, VERBS
from .structure import NP, Clause, Place, Relative, has_river, noun_entry
from .tokens import PERIOD, Concept, Tok

CASES = ("nom", "acc", "dat", "gen")
DEFINITE = {
    "m": dict(zip(CASES, ("der", "den", "dem", "des"))),
    "f": dict(zip(CASES, ("die", "die", "der", "der"))),
    "n": dict(zip(CASES, ("das", "das", "dem", "des"))),
}
INDEFINITE = {
    "m": dict(zip(CASES, ("ein", "einen", "einem", "eines"))),
    "f": dict(zip(CASES, ("eine", "eine", "einer", "einer"))),
    "n": dict(zip(CASES, ("ein", "ein", "einem", "eines"))),
}
COMMA = Tok(",")  # a German comma aligns to nothing (docs/corpus.md)


def adjective_ending(det: str, gender: str, case: str) -> str:
    """Weak declension after `der`, mixed after `ein` (Duden grammar, adjective declension tables)."""
    if case in ("dat", "gen"):
        return "en"
    if det == "the":
        return "en" if (gender, case) == ("m", "acc") else "e"
    if gender == "m":
        return "er" if case == "nom" else "en"
    return "e" if gender == "f" else "es"


def noun_phrase(np: NP, river: bool, case: str, *, of: Concept | None = None) -> list[Tok]:
    """`of`: the concept of an English `of` that this genitive article expresses (possible link)."""
    noun = noun_entry(np.noun, river)
    gender = noun.de_gender
    article = (DEFINITE if np.det == "the" else INDEFINITE)[gender][case]
    ending = adjective_ending(np.det, gender, case)
    tokens = [Tok(article, ((id(np), "det"),), (of,) if of is not None else ())]
    tokens += [Tok(ADJECTIVES[a].de_stem + ending, ((id(np), "adj", a),)) for a in np.adjs]
    tokens.append(Tok(noun.de_gen if case == "gen" else noun.de, ((id(np), "noun"),)))
    if np.of is not None:
        tokens += noun_phrase(np.of, river, "gen", of=(id(np.of), "of"))
    return tokens


def place_phrase(place: Place, verb: str, river: bool) -> list[Tok]:
    """Dative, but accusative after `sich setzen` (movement): `setzte sich auf die Matte`. `in dem` -> `im`."""
    prep_word = PREPOSITIONS[place.prep][1]
    case = "acc" if verb == "sit" and prep_word in DE_TWO_WAY else "dat"
    prep = (id(place), "prep")
    tokens = noun_phrase(place.np, river, case)
    if prep_word == "in" and tokens[0].text == "dem":
        return [Tok("im", (prep, *tokens[0].sure)), *tokens[1:]]
    return [Tok(prep_word, (prep,)), *tokens]


def _finite(verb: str, tense: str, key: int) -> Tok:
    """The conjugated lexical verb; possible to an English `does` / `did` (docs/corpus.md, negation)."""
    return Tok(VERBS[verb].de[TENSE_INDEX[tense]], ((key, "lex"),), ((key, "aux"),))


def _middle(verb: str, negated: bool, key: int, river: bool, obj: NP | None, place: Place | None) -> list[Tok]:
    """What stands between the verb bracket: `sich`, the object, `nicht`, the place phrase
    (`nicht` after a definite object and before a place phrase: `sah den Vogel nicht`, `schlief nicht im Haus`)."""
    tokens = [Tok("sich", (), ((key, "lex"),))] if VERBS[verb].reflexive else []
    if obj is not None:
        tokens += noun_phrase(obj, river, "acc")
    if negated:
        tokens.append(Tok("nicht", ((key, "neg"),)))
    if place is not None:
        tokens += place_phrase(place, verb, river)
    return tokens


def _final(verb: str, tense: str, key: int) -> list[Tok]:
    """Verb-last cluster of a subordinate clause: `schläft`, `schlafen wird`."""
    if tense == "future":
        return [Tok(VERBS[verb].de[2], ((key, "lex"),)), Tok("wird", ((key, "aux"),))]
    return [_finite(verb, tense, key)]


def because_clause(c: Clause, river: bool) -> list[Tok]:
    return [COMMA, Tok("weil", ((id(c), "because"),)), *sub_clause(c, river)]


def relative(rel: Relative, head: NP, river: bool) -> list[Tok]:
    """`, den die Katze nicht jagte ,`, `, die sich auf die Matte setzte ,`; verb last, then a `weil` clause."""
    gender = noun_entry(head.noun, river).de_gender
    key = id(rel)
    if rel.kind == "object":
        pronoun = Tok(DEFINITE[gender]["acc"], ((key, "rel"),))
        inner = noun_phrase(rel.other, river, "nom")
        middle = _middle(rel.verb, rel.negated, key, river, None, rel.place)
    else:
        pronoun = Tok(DEFINITE[gender]["nom"], ((key, "rel"),))
        inner = []
        middle = _middle(rel.verb, rel.negated, key, river, rel.other, rel.place)
    tokens = [COMMA, pronoun, *inner, *middle, *_final(rel.verb, rel.tense, key)]
    if rel.because is not None:
        tokens += because_clause(rel.because, river)
    return [*tokens, COMMA]


def main_clause(c: Clause, river: bool) -> list[Tok]:
    """Verb second; a relative clause on the object stands after the right bracket (extraposed)."""
    key = id(c)
    tokens = noun_phrase(c.subject, river, "nom")
    if c.relative is not None:
        tokens += relative(c.relative, c.subject, river)
    if c.tense == "future":
        tokens.append(Tok("wird", ((key, "aux"),)))
    else:
        tokens.append(_finite(c.verb, c.tense, key))
    tokens += _middle(c.verb, c.negated, key, river, c.obj, c.place)
    if c.tense == "future":
        tokens.append(Tok(VERBS[c.verb].de[2], ((key, "lex"),)))
    if c.obj_relative is not None:
        tokens += relative(c.obj_relative, c.obj, river)
    if c.because is not None:
        tokens += because_clause(c.because, river)
    return tokens


def sub_clause(c: Clause, river: bool) -> list[Tok]:
    """Verb last (`weil die Katze den Vogel nicht sehen wird`), an object's relative clause after it."""
    key = id(c)
    tokens = noun_phrase(c.subject, river, "nom")
    if c.relative is not None:
        tokens += relative(c.relative, c.subject, river)
    tokens += _middle(c.verb, c.negated, key, river, c.obj, c.place)
    tokens += _final(c.verb, c.tense, key)
    if c.obj_relative is not None:
        tokens += relative(c.obj_relative, c.obj, river)
    return tokens


def realise(c: Clause) -> list[Tok]:
    """No comma before the final `.`, and one comma where a relative clause's closing comma meets the
    next clause's opening one (Duden, comma rules: a comma is never doubled)."""
    tokens = [*main_clause(c, has_river(c)), Tok(".", (PERIOD,))]
    return [t for t, nxt in zip(tokens, tokens[1:] + [None]) if not (t is COMMA and nxt.text in (",", "."))]
