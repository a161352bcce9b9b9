"""The generated corpora keep the contract of docs/corpus.md: every listed form, every construction,
exact gold links, held-out combinations, one translation per source sentence."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from attention_lens.model.corpora import PAIRS, Example, generate, read_tsv, write_tsv
from attention_lens.model.corpora.splits import HELD_OUT, generate_structured, to_example
from attention_lens.model.corpora.structure import (
    CONSTRUCTIONS,
    NP,
    Clause,
    Place,
    Relative,
    clauses,
    combos,
    constructions,
    relatives,
)

N_TRAIN = 3000

REFERENCES = {
    "en-fr": [
        ("the cat sat .", "le chat s' assit ."),
        ("the black cat sat on the mat .", "le chat noir s' assit sur le tapis ."),
        ("the cat sat on the mat .", "le chat s' assit sur le tapis ."),
        ("the dog that the cat chased barked .", "le chien que le chat chassa aboya ."),
        ("the dog chased the black cat .", "le chien chassa le chat noir ."),
        ("the dog does not sleep .", "le chien ne dort pas ."),
        ("the cat did not see the bird .", "le chat ne vit pas l' oiseau ."),
        ("the cat that sees the bird sleeps .", "le chat qui voit l' oiseau dort ."),
        ("the dog barks because the cat runs .", "le chien aboie parce que le chat court ."),
        ("the dog sat near the bank of the river .", "le chien s' assit près de la rive de la rivière ."),
        ("the man found the bank .", "l' homme trouva la banque ."),
        ("the cat will chase the bird .", "le chat chassera l' oiseau ."),
    ],
    "de-en": [
        ("der Hund , den die Katze jagte , bellte .", "the dog that the cat chased barked ."),
        ("die Katze sah den Vogel nicht .", "the cat did not see the bird ."),
        ("die Katze , die den Vogel sieht , schläft .", "the cat that sees the bird sleeps ."),
        ("der Hund bellt , weil die Katze läuft .", "the dog barks because the cat runs ."),
        ("die Katze setzte sich auf die Matte .", "the cat sat on the mat ."),
        ("die Katze wird den Vogel jagen .", "the cat will chase the bird ."),
        ("der Hund schläft nicht .", "the dog does not sleep ."),
        ("der Hund setzte sich neben das Ufer des Flusses .", "the dog sat near the bank of the river ."),
        ("der Mann fand die Bank .", "the man found the bank ."),
    ],
}


def words(text: str) -> list[str]:
    return text.split()


# The word tables of docs/corpus.md, written out again here: this file checks the generator against
# the spec, not against its own lexicon.
EN_WORDS = words(
    """
cat dog mouse bird horse child girl man woman teacher doctor king queen friend house garden river bank
table mat book letter apple bread car city street tree door window loan
black white red green happy tired big small old young good beautiful
sleeps slept sleep sits sat sit barks barked bark runs ran run sings sang sing laughs laughed laugh
sees saw see chases chased chase eats ate eat reads read writes wrote write loves loved love
finds found find opens opened open takes took take
on in under near with behind of the a that because does did will not .
"""
)
FR_WORDS = words(
    """
chat chien souris oiseau cheval enfant fille homme femme professeur médecin roi reine ami maison jardin
rivière banque rive table tapis livre lettre pomme pain voiture ville rue arbre porte fenêtre prêt
noir noire blanc blanche rouge vert verte heureux heureuse fatigué fatiguée grand grande petit petite
vieux vieil vieille jeune bon bonne beau bel belle
dort dormit dormira assied assit assiéra aboie aboya aboiera court courut courra chante chanta chantera
rit rira voit vit verra chasse chassa chassera mange mangea mangera lit lut lira écrit écrivit écrira
aime aima aimera trouve trouva trouvera ouvre ouvrit ouvrira prend prit prendra
sur dans sous près avec derrière de d' du le la l' un une s' ne n' pas que qu' qui parce .
"""
)
DE_NOUNS = words(
    """
Katze Hund Maus Vogel Pferd Kind Mädchen Mann Frau Lehrer Arzt König Königin Freund Haus Garten Fluss
Bank Ufer Tisch Matte Buch Brief Apfel Brot Auto Stadt Straße Baum Tür Fenster Kredit
"""
)
DE_GENITIVES = words(
    """
Hundes Vogels Pferdes Kindes Mädchens Mannes Lehrers Arztes Königs Freundes Hauses Gartens Flusses Ufers
Tisches Buches Briefes Apfels Brotes Autos Baumes Fensters Kredits
"""
)
DE_ADJECTIVES = words("schwarz weiß rot grün glücklich müd groß klein alt jung gut schön")
DE_WORDS = words(
    """
schläft schlief schlafen setzt setzte setzen sich bellt bellte bellen läuft lief laufen singt sang singen
lacht lachte lachen sieht sah sehen jagt jagte jagen isst aß essen liest las lesen schreibt schrieb
schreiben liebt liebte lieben findet fand finden öffnet öffnete öffnen nimmt nahm nehmen
auf in im unter neben mit hinter der die das den dem des ein eine einen einem einer eines
wird nicht weil , .
"""
)
FR_VOWEL = re.compile(r"^[aeiouyéèêâîôûh]")
LINK = re.compile(r"^(\d+)([-?])(\d+)$")


@pytest.fixture(scope="module")
def corpora() -> dict[str, dict[str, list[tuple[Example, Clause]]]]:
    return {pair: generate_structured(pair, seed=0, n_train=N_TRAIN, n_valid=300, n_test=300) for pair in PAIRS}


def examples(corpora, pair: str, split: str | None = None) -> list[Example]:
    splits = [split] if split else ["train", "valid", "test"]
    return [ex for s in splits for ex, _ in corpora[pair][s]]


def vocabulary(exs: list[Example], side: str) -> set[str]:
    return {tok for ex in exs for tok in getattr(ex, side).split()}


def test_deterministic_and_seed_dependent():
    a = generate("en-fr", seed=3, n_train=200, n_valid=20, n_test=20)
    b = generate("en-fr", seed=3, n_train=200, n_valid=20, n_test=20)
    c = generate("en-fr", seed=4, n_train=200, n_valid=20, n_test=20)
    assert a == b
    assert a["train"] != c["train"]
    assert [len(a[s]) for s in ("train", "valid", "test")] == [200, 20, 20]


def test_unknown_pair_is_an_error():
    with pytest.raises(ValueError, match="unknown pair"):
        generate("fr-en", n_train=10)


@pytest.mark.parametrize("pair", PAIRS)
def test_no_duplicate_sources_and_one_translation_per_source(corpora, pair):
    sources = [ex.source for ex in examples(corpora, pair)]
    assert len(sources) == len(set(sources))
    other_seed = generate(pair, seed=1, n_train=N_TRAIN, n_valid=0, n_test=0)["train"]
    translation = {ex.source: ex.target for ex in examples(corpora, pair)}
    for ex in other_seed:
        assert translation.setdefault(ex.source, ex.target) == ex.target, ex.source


@pytest.mark.parametrize("pair", PAIRS)
def test_reference_sentences_are_in_train(corpora, pair):
    train = {(ex.source, ex.target) for ex in examples(corpora, pair, "train")}
    for ref in REFERENCES[pair]:
        assert ref in train


def test_every_spec_word_is_in_train(corpora):
    en = vocabulary(examples(corpora, "en-fr", "train"), "source") & vocabulary(
        examples(corpora, "de-en", "train"), "target"
    )
    fr = vocabulary(examples(corpora, "en-fr", "train"), "target")
    de = vocabulary(examples(corpora, "de-en", "train"), "source")
    assert set(EN_WORDS) - en == set()
    assert set(FR_WORDS) - fr == set()
    assert set(DE_WORDS + DE_NOUNS + DE_GENITIVES) - de == set()
    declined = {stem + ending for stem in DE_ADJECTIVES for ending in ("e", "en", "er", "es")}
    assert declined - de == set()


def test_french_elision_and_contractions(corpora):
    for ex in examples(corpora, "en-fr"):
        toks = ex.target.split()
        for word, nxt in zip(toks, toks[1:]):
            assert "'" not in word[:-1], ex.target  # `l' oiseau`, never `l'oiseau`
            if word.endswith("'"):
                assert FR_VOWEL.match(nxt), ex.target
            if word in {"le", "la", "de", "que", "ne", "du"}:
                assert not FR_VOWEL.match(nxt), ex.target
            if word in {"vieil", "bel"}:
                assert FR_VOWEL.match(nxt), ex.target
            if word in {"vieux", "beau"}:
                assert not FR_VOWEL.match(nxt), ex.target
            assert (word, nxt) not in {("de", "le"), ("de", "un"), ("de", "une")}, ex.target


def test_french_agreement_and_position():
    def fr(c: Clause) -> str:
        return to_example(c, "en-fr").target

    assert fr(Clause(NP("mouse", "the", ["black"]), "sleep", "present")) == "la souris noire dort ."
    assert fr(Clause(NP("cat", "the", ["black"]), "sleep", "present")) == "le chat noir dort ."
    assert fr(Clause(NP("cat", "the", ["small", "black"]), "sleep", "present")) == "le petit chat noir dort ."
    assert fr(Clause(NP("man", "a", ["old"]), "laugh", "past")) == "un vieil homme rit ."
    assert fr(Clause(NP("bird", "the", ["beautiful"]), "sing", "future")) == "le bel oiseau chantera ."
    assert fr(Clause(NP("house", "the", ["old", "white"]), "sleep", "present")) == "la vieille maison blanche dort ."
    assert fr(Clause(NP("bird", "the", ["happy"]), "sleep", "present")) == "l' oiseau heureux dort ."
    assert fr(Clause(NP("man", "the"), "love", "present", obj=NP("queen", "the"))) == "l' homme aime la reine ."
    assert (
        fr(Clause(NP("man", "the"), "love", "present", True, NP("queen", "the"))) == "l' homme n' aime pas la reine ."
    )
    assert fr(Clause(NP("cat", "the"), "see", "past", True, NP("bird", "a"))) == "le chat ne vit pas d' oiseau ."
    assert fr(Clause(NP("dog", "the"), "sleep", "future", True)) == "le chien ne dormira pas ."
    assert fr(Clause(NP("cat", "the"), "sit", "future", True)) == "le chat ne s' assiéra pas ."
    assert (
        fr(Clause(NP("dog", "the"), "bark", "past", relative=Relative("object", "chase", "past", NP("cat", "a"))))
        == "le chien qu' un chat chassa aboya ."
    )
    assert fr(Clause(NP("door", "the", of=NP("garden", "the")), "sleep", "present")) == "la porte du jardin dort ."
    assert fr(Clause(NP("door", "the", of=NP("tree", "a")), "sleep", "present")) == "la porte d' un arbre dort ."


def test_german_declension_and_word_order():
    def de(c: Clause) -> str:
        return to_example(c, "de-en").source

    assert de(Clause(NP("dog", "the", ["black"]), "sleep", "present")) == "der schwarze Hund schläft ."
    assert (
        de(Clause(NP("man", "the"), "see", "past", obj=NP("dog", "the", ["black"])))
        == "der Mann sah den schwarzen Hund ."
    )
    assert de(Clause(NP("dog", "a", ["black"]), "sleep", "present")) == "ein schwarzer Hund schläft ."
    assert de(Clause(NP("horse", "a", ["black"]), "sleep", "present")) == "ein schwarzes Pferd schläft ."
    assert (
        de(Clause(NP("man", "the"), "sleep", "present", place=Place("with", NP("dog", "the", ["black"]))))
        == "der Mann schläft mit dem schwarzen Hund ."
    )
    assert (
        de(Clause(NP("man", "the"), "sleep", "past", place=Place("in", NP("house", "the"))))
        == "der Mann schlief im Haus ."
    )
    assert de(Clause(NP("door", "the", of=NP("city", "the")), "sleep", "present")) == "die Tür der Stadt schläft ."
    assert (
        de(Clause(NP("cat", "the"), "sit", "future", place=Place("on", NP("mat", "the"))))
        == "die Katze wird sich auf die Matte setzen ."
    )
    assert (
        de(
            Clause(
                NP("dog", "the"),
                "bark",
                "present",
                because=Clause(NP("cat", "the"), "see", "future", True, NP("bird", "the")),
            )
        )
        == "der Hund bellt , weil die Katze den Vogel nicht sehen wird ."
    )


def test_gold_links_follow_the_spec():
    def gold(c: Clause, pair: str = "en-fr") -> set[str]:
        return set(to_example(c, pair).gold.split())

    # `will sleep` -> `dormira`: both sure.
    assert gold(Clause(NP("dog", "the"), "sleep", "future")) == {"0-0", "1-1", "2-2", "3-2", "4-3"}
    # `near the garden` -> `près du jardin`.
    near = gold(Clause(NP("dog", "the"), "sleep", "present", place=Place("near", NP("garden", "the")))) - {
        "0-0",
        "1-1",
        "2-2",
    }
    assert near == {"3-3", "4-4", "3?4", "5-5", "6-6"}
    # `does not sleep` -> `ne dort pas`.
    assert gold(Clause(NP("dog", "the"), "sleep", "present", True)) == {"0-0", "1-1", "2?3", "3-2", "3-4", "4-3", "5-5"}
    # German `schläft nicht` -> `does not sleep`.
    assert gold(Clause(NP("dog", "the"), "sleep", "present", True), "de-en") == {
        "0-0",
        "1-1",
        "2-4",
        "2?2",
        "3-3",
        "4-5",
    }
    # `sat` -> `s' assit`; `setzte sich` -> `sat`.
    assert gold(Clause(NP("cat", "the"), "sit", "past")) == {"0-0", "1-1", "2?2", "2-3", "3-4"}
    assert gold(Clause(NP("cat", "the"), "sit", "past"), "de-en") == {"0-0", "1-1", "2-2", "3?2", "4-3"}
    # `im Haus` -> `in the house`: `im` sure to both.
    im = gold(Clause(NP("man", "the"), "sleep", "past", place=Place("in", NP("house", "the"))), "de-en")
    assert {"3-3", "3-4", "4-5"} <= im
    # `of the garden` -> `du jardin`: sure to `the`, possible to `of`; German genitive likewise.
    of = gold(Clause(NP("door", "the", of=NP("garden", "the")), "sleep", "present"))
    assert {"2?2", "3-2", "4-3"} <= of
    gen = gold(Clause(NP("door", "the", of=NP("garden", "the")), "sleep", "present"), "de-en")
    assert {"2?2", "2-3", "3-4"} <= gen
    # `because` -> `parce que`: both sure.
    cause = gold(Clause(NP("dog", "the"), "bark", "present", because=Clause(NP("cat", "the"), "run", "present")))
    assert {"3-3", "3-4"} <= cause


@pytest.mark.parametrize("pair", PAIRS)
def test_every_word_is_linked_and_links_are_in_range(corpora, pair):
    for ex in examples(corpora, pair):
        src, tgt = ex.source.split(), ex.target.split()
        assert src[-1] == "." and tgt[-1] == "." and "." not in src[:-1] + tgt[:-1]
        assert max(len(src), len(tgt)) <= 30
        linked_src, linked_tgt = set(), set()
        for link in ex.gold.split():
            i, kind, j = LINK.match(link).groups()
            i, j = int(i), int(j)
            assert i < len(src) and j < len(tgt), (ex, link)
            assert src[i] != "," and tgt[j] != ",", ex
            linked_src.add(i)
            linked_tgt.add(j)
        assert f"{len(src) - 1}-{len(tgt) - 1}" in ex.gold.split()
        assert {i for i, tok in enumerate(src) if tok != ","} == linked_src, ex
        assert {j for j, tok in enumerate(tgt) if tok != ","} == linked_tgt, ex


def test_german_capitals_and_commas(corpora):
    nouns = set(DE_NOUNS + DE_GENITIVES)
    for ex, c in corpora["de-en"]["train"]:
        toks = ex.source.split()
        assert {t for t in toks if t[0].isupper()} <= nouns, ex.source
        assert not {t for t in toks if t.capitalize() in nouns and not t[0].isupper()}, ex.source
        commas = toks.count(",")
        opened = len(list(relatives(c))) + len(list(clauses(c))) - 1  # one comma opens each relative / `weil`
        assert opened <= commas <= opened + len(list(relatives(c))), ex.source  # a closing one may merge
        assert ", ," not in ex.source and ", ." not in ex.source
        assert "," not in ex.target.split()
        if c.relative is not None:
            assert toks[toks.index(",") + 1] in {"der", "die", "das", "den"}


def test_the_bank_rule(corpora):
    for ex in examples(corpora, "en-fr"):
        src, tgt = ex.source.split(), ex.target.split()
        assert ("rive" in tgt) == ("bank" in src and "river" in src), ex
        assert ("banque" in tgt) == ("bank" in src and "river" not in src), ex
    for ex in examples(corpora, "de-en"):
        src = ex.source.split()
        river = "Fluss" in src or "Flusses" in src
        assert ("Ufer" in src or "Ufers" in src) == ("bank" in ex.target.split() and river), ex
    after = [
        ex
        for ex in examples(corpora, "en-fr", "train")
        if "river" in ex.source.split("bank", 1)[-1] and "bank" in ex.source
    ]
    assert len(after) > 0.05 * N_TRAIN


@pytest.mark.parametrize("pair", PAIRS)
def test_held_out_combinations(corpora, pair):
    held = HELD_OUT["test"] | HELD_OUT["valid"]
    for _, c in corpora[pair]["train"]:
        assert not combos(c) & held
    for split, other in (("test", "valid"), ("valid", "test")):
        seen = set()
        for _, c in corpora[pair][split]:
            assert combos(c) & HELD_OUT[split]
            assert not combos(c) & HELD_OUT[other]
            seen |= combos(c) & HELD_OUT[split]
        assert seen == HELD_OUT[split]


@pytest.mark.parametrize("pair", PAIRS)
def test_each_construction_is_well_represented(corpora, pair):
    train = corpora[pair]["train"]
    counts = Counter(k for _, c in train for k in constructions(c))
    for k in range(1, 9):
        assert counts[k] >= 0.05 * len(train), (CONSTRUCTIONS[k], counts)
    short = sum(len(ex.source.split()) <= 20 for ex, _ in train)
    assert short >= 0.9 * len(train)


def test_tsv_round_trip(tmp_path):
    exs = generate("de-en", n_train=50, n_valid=5, n_test=5)["train"]
    path = tmp_path / "train.tsv"
    write_tsv(exs, path)
    assert read_tsv(path) == exs
    two = tmp_path / "two.tsv"
    two.write_text("a b .\tc d .\n", encoding="utf-8")
    assert read_tsv(two) == [Example("a b .", "c d .", "")]


def test_tsv_malformed_line(tmp_path):
    path = tmp_path / "bad.tsv"
    path.write_text("a .\tb .\t0-0 1-1\nonly one column\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"bad.tsv:2"):
        read_tsv(path)
