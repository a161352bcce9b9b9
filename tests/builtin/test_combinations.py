"""The generator produces the construction combinations docs/corpus.md allows (negation, tense,
objects and place phrases inside relative clauses; relatives on objects; relatives and `because` inside
each other), with valid gold links, and the combination splits hold them out of train."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from attention_lens.model.corpora import PAIRS, generate, read_tsv
from attention_lens.model.corpora.splits import generate_structured, to_example
from attention_lens.model.corpora.structure import NP, SHAPES, Clause, Place, Relative, relatives, shapes

from tests.fixtures.checkpoints import ROOT

LINK = re.compile(r"^(\d+)([-?])(\d+)$")
SPLITS = ("train", "valid", "test")


@pytest.fixture(scope="module")
def corpora():
    return {pair: generate_structured(pair, seed=0, n_train=6000, n_valid=300, n_test=300, n_combo=300)
            for pair in PAIRS}


def realised(c: Clause, pair: str) -> tuple[str, str]:
    ex = to_example(c, pair)
    return ex.source, ex.target


def test_the_issue_sentences_are_generated_exactly():
    teacher = Clause(NP("teacher"), "find", "past", obj=NP("door", "a", ["big", "green"]),
                     relative=Relative("subject", "sleep", "future", None, True, Place("under", NP("tree"))))
    assert realised(teacher, "en-fr") == (
        "the teacher that will not sleep under the tree found a big green door .",
        "le professeur qui ne dormira pas sous l' arbre trouva une grande porte verte .")
    assert (realised(teacher, "de-en")[0]
            == "der Lehrer , der nicht unter dem Baum schlafen wird , fand eine große grüne Tür .")
    mouse = Clause(NP("mouse"), "run", "present", relative=Relative("object", "find", "past", NP("king"), True))
    assert realised(mouse, "en-fr") == ("the mouse that the king did not find runs .",
                                        "la souris que le roi ne trouva pas court .")
    assert realised(mouse, "de-en")[0] == "die Maus , die der König nicht fand , läuft ."
    doctor = Clause(NP("doctor", "the", ["tired"]), "love", "present", obj=NP("river"),
                    relative=Relative("subject", "run", "past", None, place=Place("on", NP("bank"))))
    assert realised(doctor, "en-fr") == ("the tired doctor that ran on the bank loves the river .",
                                         "le médecin fatigué qui courut sur la rive aime la rivière .")
    bird = Clause(NP("bird", "the", ["red"]), "sing", "past",
                  relative=Relative("object", "see", "present", NP("teacher", "the", ["happy"]),
                                    place=Place("on", NP("table"))))
    assert realised(bird, "de-en") == ("der rote Vogel , den der glückliche Lehrer auf dem Tisch sieht , sang .",
                                       "the red bird that the happy teacher sees on the table sang .")
    door = Clause(NP("king"), "find", "present", obj=NP("door"),
                  obj_relative=Relative("object", "open", "past", NP("woman", "a")))
    assert realised(door, "en-fr") == ("the king finds the door that a woman opened .",
                                       "le roi trouve la porte qu' une femme ouvrit .")
    book = Clause(NP("cat"), "find", "present", obj=NP("book", "the", ["green"]),
                  obj_relative=Relative("object", "read", "past", NP("king", "the", ["old"])))
    assert realised(book, "de-en") == ("die Katze findet das grüne Buch , das der alte König las .",
                                       "the cat finds the green book that the old king read .")


def test_german_relatives_extrapose_from_objects_and_nest_with_weil():
    def de(c: Clause) -> str:
        return realised(c, "de-en")[0]

    future = Clause(NP("king"), "find", "future", True, NP("door"),
                    obj_relative=Relative("object", "open", "past", NP("man")))
    assert de(future) == "der König wird die Tür nicht finden , die der Mann öffnete ."
    inner = Clause(NP("king"), "open", "future", obj=NP("house"),
                   obj_relative=Relative("subject", "eat", "present", NP("city")))
    assert (de(Clause(NP("dog"), "bark", "present", because=inner))
            == "der Hund bellt , weil der König das Haus öffnen wird , das die Stadt isst .")
    barked = Relative("subject", "bark", "past", None, because=Clause(NP("cat"), "run", "past"))
    assert de(Clause(NP("dog"), "sleep", "present", relative=barked)) == (
        "der Hund , der bellte , weil die Katze lief , schläft .")
    saw = Clause(NP("cat"), "run", "present", relative=Relative("object", "see", "past", NP("man")))
    assert de(Clause(NP("dog"), "bark", "present", because=saw)) == (
        "der Hund bellt , weil die Katze , die der Mann sah , läuft .")
    then = Clause(NP("king"), "find", "past", obj=NP("door"), obj_relative=Relative("subject", "sleep", "past", None),
                  because=Clause(NP("cat"), "run", "present"))
    assert de(then) == "der König fand die Tür , die schlief , weil die Katze läuft ."
    sit = Relative("subject", "sit", "future", None, True, Place("on", NP("mat")))
    assert de(Clause(NP("cat"), "sleep", "past", relative=sit)) == (
        "die Katze , die sich nicht auf die Matte setzen wird , schlief .")
    sees = Relative("subject", "see", "present", NP("bird", "a"), True)
    assert realised(Clause(NP("cat"), "sleep", "past", relative=sees), "en-fr")[1] == (
        "le chat qui ne voit pas d' oiseau dormit .")


@pytest.mark.parametrize("pair", PAIRS)
def test_every_combination_split_has_its_combination_with_valid_gold_links(corpora, pair):
    for shape in SHAPES:
        items = corpora[pair][f"combo-{shape}"]
        assert len(items) == 300
        for ex, c in items:
            assert shapes(c, pair) == {shape}, ex.source
            src, tgt = ex.source.split(), ex.target.split()
            assert src[-1] == tgt[-1] == "." and "." not in src[:-1] + tgt[:-1]
            links = [LINK.match(link).groups() for link in ex.gold.split()]
            pairs = {(int(i), int(j)) for i, _, j in links}
            assert all(i < len(src) and j < len(tgt) for i, j in pairs), ex
            assert f"{len(src) - 1}-{len(tgt) - 1}" in ex.gold.split()
            assert not any(src[i] == "," or tgt[j] == "," for i, j in pairs), ex
            assert {i for i, _ in pairs} == {i for i, t in enumerate(src) if t != ","}, ex
            assert {j for _, j in pairs} == {j for j, t in enumerate(tgt) if t != ","}, ex
            assert ", ," not in ex.source and ", ." not in ex.source


@pytest.mark.parametrize("pair", PAIRS)
def test_held_out_combinations_never_reach_train_valid_or_test(corpora, pair):
    for split in SPLITS:
        assert not any(shapes(c, pair) for _, c in corpora[pair][split]), split
    held = {ex.source for shape in SHAPES for ex, _ in corpora[pair][f"combo-{shape}"]}
    assert not held & {ex.source for split in SPLITS for ex, _ in corpora[pair][split]}


def test_de_en_holds_out_only_future_relatives_in_because_clauses(corpora):
    """de-en trains subject relatives on `weil` subjects and object relatives on `weil` objects in the present
    and past (so a relative's type is not given away by its position there) and holds out the future ones;
    en-fr holds out all of them."""
    for shape, on_object in (("rel-because", False), ("rel-obj", True)):
        def tenses(c: Clause, on_object=on_object) -> list[str]:
            return [a.rel.tense for a in relatives(c) if a.host is not c and a.on_object == on_object
                    and a.rel.kind == ("object" if on_object else "subject")]

        de = Counter(t for _, c in corpora["de-en"]["train"] for t in tenses(c))
        assert de["future"] == 0 and de["present"] >= 20 and de["past"] >= 20, (shape, de)
        assert not any(tenses(c) for _, c in corpora["en-fr"]["train"]), shape
        assert all(set(tenses(c)) == {"future"} for _, c in corpora["de-en"][f"combo-{shape}"]), shape
        assert all(tenses(c) for _, c in corpora["en-fr"][f"combo-{shape}"]), shape


_NOUNS = """cat dog mouse bird horse child girl man woman teacher doctor king queen friend house garden river
bank table mat book letter apple bread car city street tree door window loan"""
NOUNS_EN = set(_NOUNS.split())


def object_relative_negated(source: str, aux: str) -> bool:
    """Surface test, independent of the generator: `that` + NP + `aux not` (`that the old king will not`)."""
    words = source.split()
    for k, w in enumerate(words):
        if w != "that" or k + 1 >= len(words) or words[k + 1] not in ("the", "a", "an"):
            continue
        rest = words[k + 2:]
        noun = next((n for n, t in enumerate(rest) if t in NOUNS_EN), None)
        if noun is not None and rest[noun + 1:noun + 3] == [aux, "not"]:
            return True
    return False


@pytest.mark.parametrize("pair", PAIRS)
def test_no_future_negated_object_relative_in_train_by_its_words(corpora, pair):
    side = "source" if pair == "en-fr" else "target"
    train = [getattr(ex, side) for ex, _ in corpora[pair]["train"]]
    assert not any(object_relative_negated(s, "will") for s in train)
    assert sum(object_relative_negated(s, "did") for s in train) > 30  # the sibling: past negated object relatives
    combo = [getattr(ex, side) for ex, _ in corpora[pair]["combo-neg-rel"]]
    assert all(object_relative_negated(s, "will") for s in combo)


@pytest.mark.parametrize("pair", PAIRS)
def test_sibling_combinations_are_trained(corpora, pair):
    """Each held-out combination keeps trained siblings, so each part is learnt in that very place."""
    seen = Counter()
    for _, c in corpora[pair]["train"]:
        for a in relatives(c):
            rel, in_because = a.rel, a.host is not c
            seen["negated object relative, present or past"] += rel.kind == "object" and rel.negated
            seen["future object relative"] += rel.kind == "object" and rel.tense == "future"
            seen["negated future subject relative"] += rel.kind == "subject" and rel.negated and rel.tense == "future"
            seen["place in an object relative"] += rel.kind == "object" and rel.place is not None
            seen["object relative on a main object"] += rel.kind == "object" and a.on_object and not in_because
            seen["subject relative on a because object"] += rel.kind == "subject" and a.on_object and in_because
            seen["object relative on a because subject"] += rel.kind == "object" and not a.on_object and in_because
            seen["because inside a relative"] += rel.because is not None
    assert len(seen) == 8 and all(n >= 0.005 * 6000 for n in seen.values()), seen


@pytest.mark.parametrize("pair", PAIRS)
def test_shipped_combination_files_match_the_generator(pair):
    fresh = generate(pair, n_train=0)
    for shape in SHAPES:
        path = ROOT / "assets" / "data" / f"{pair}.combo-{shape}.tsv"
        assert read_tsv(path) == fresh[f"combo-{shape}"], path
    assert read_tsv(ROOT / "assets" / "data" / f"{pair}.test.tsv") == fresh["test"]
