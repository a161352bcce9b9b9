"""French realisation (target of en-fr): gender agreement, adjective position, elision as its own token
(`l' oiseau`, `s' assit`, `qu' un`), `vieil` / `bel` before a vowel, `du` / `de la` / `de l'` / `d' un`,
`ne ... pas` (`n' aime pas`, `pas d' oiseau` for a negated indefinite object)."""

from __future__ import annotations

from .lexicon import ADJECTIVES, PREPOSITIONS, TENSE_INDEX, VERBS, starts_with_vowel
from .structure import NP, Clause, Place, Relative, has_river, noun_entry
from .tokens import PERIOD, Concept, Tok


def _adjective(adj: str, gender: str, next_word: str) -> str:
    entry = ADJECTIVES[adj]
    if gender == "f":
        return entry.fr_f
    if entry.fr_m_vowel and starts_with_vowel(next_word):
        return entry.fr_m_vowel
    return entry.fr_m


def noun_phrase(np: NP, river: bool, *, de: Concept | None = None, negative: bool = False) -> list[Tok]:
    """`de` (the concept of `of` or `près de`) puts `de` in front and contracts `de le` -> `du`;
    `negative` turns an indefinite article into `de` / `d'` (`ne vit pas d' oiseau`)."""
    noun = noun_entry(np.noun, river)
    gender = noun.fr_gender
    det = (id(np), "det")
    before = [a for a in np.adjs if ADJECTIVES[a].fr_before]
    after = [a for a in np.adjs if not ADJECTIVES[a].fr_before]
    head = [Tok(_adjective(a, gender, noun.fr), ((id(np), "adj", a),)) for a in before]
    head.append(Tok(noun.fr, ((id(np), "noun"),)))
    head += [Tok(_adjective(a, gender, ""), ((id(np), "adj", a),)) for a in after]
    vowel = starts_with_vowel(head[0].text)
    if np.det == "the":
        article = "l'" if vowel else ("le" if gender == "m" else "la")
    elif negative:
        article = "d'" if vowel else "de"
    else:
        article = "un" if gender == "m" else "une"
    if de is None:
        tokens = [Tok(article, (det,))]
    elif article == "le":
        # `du` is the article with the preposition absorbed (docs/corpus.md, contractions).
        tokens = [Tok("du", (det,), (de,))]
    else:
        tokens = [Tok("d'" if starts_with_vowel(article) else "de", (de,)), Tok(article, (det,))]
    tokens += head
    if np.of is not None:
        tokens += noun_phrase(np.of, river, de=(id(np.of), "of"))
    return tokens


def verb_group(verb: str, tense: str, negated: bool, key: int) -> list[Tok]:
    """`dort`, `ne dort pas`, `n' aime pas`, `s' assit`, `ne s' assiéra pas`. The verb is sure to an
    English `will`, possible to `does` / `did` (docs/corpus.md, negation)."""
    entry = VERBS[verb]
    lex, aux, neg = (key, "lex"), (key, "aux"), (key, "neg")
    form = entry.fr[TENSE_INDEX[tense]]
    main = Tok(form, (lex, aux)) if tense == "future" else Tok(form, (lex,), (aux,))
    core = [Tok("s'", (), (lex,)), main] if entry.reflexive else [main]
    if not negated:
        return core
    ne = "n'" if starts_with_vowel(core[0].text) else "ne"
    return [Tok(ne, (neg,)), *core, Tok("pas", (neg,))]


def place_phrase(place: Place, river: bool) -> list[Tok]:
    prep = (id(place), "prep")
    if place.prep == "near":
        return [Tok("près", (prep,)), *noun_phrase(place.np, river, de=prep)]
    return [Tok(PREPOSITIONS[place.prep][0], (prep,)), *noun_phrase(place.np, river)]


def because_clause(c: Clause, river: bool) -> list[Tok]:
    key = (id(c), "because")
    rest = clause(c, river)
    return [Tok("parce", (key,)), Tok("qu'" if starts_with_vowel(rest[0].text) else "que", (key,)), *rest]


def relative(rel: Relative, river: bool) -> list[Tok]:
    """`que le chat chassa`, `qui ne dormira pas sous l' arbre`, `qui ne voit pas d' oiseau`."""
    key = (id(rel), "rel")
    verb = verb_group(rel.verb, rel.tense, rel.negated, id(rel))
    if rel.kind == "subject":
        other = []
        if rel.other is not None:
            other = noun_phrase(rel.other, river, negative=rel.negated and rel.other.det == "a")
        tokens = [Tok("qui", (key,)), *verb, *other]
    else:
        rest = [*noun_phrase(rel.other, river), *verb]
        tokens = [Tok("qu'" if starts_with_vowel(rest[0].text) else "que", (key,)), *rest]
    if rel.place is not None:
        tokens += place_phrase(rel.place, river)
    if rel.because is not None:
        tokens += because_clause(rel.because, river)
    return tokens


def clause(c: Clause, river: bool) -> list[Tok]:
    tokens = noun_phrase(c.subject, river)
    if c.relative is not None:
        tokens += relative(c.relative, river)
    tokens += verb_group(c.verb, c.tense, c.negated, id(c))
    if c.obj is not None:
        tokens += noun_phrase(c.obj, river, negative=c.negated and c.obj.det == "a")
    if c.obj_relative is not None:
        tokens += relative(c.obj_relative, river)
    if c.place is not None:
        tokens += place_phrase(c.place, river)
    if c.because is not None:
        tokens += because_clause(c.because, river)
    return tokens


def realise(c: Clause) -> list[Tok]:
    return [*clause(c, has_river(c)), Tok(".", (PERIOD,))]
