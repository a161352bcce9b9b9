"""The shipped everyday-*-aligned models: fine-tuned from the everyday models with guided alignment on the same
data and split, their cards record it truthfully, they translate as well as the model they started from, they
stay as small, and the supervised head aligns hand-aligned sentences better than the same head did before."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.analysis.alignment import run_alignment
from attention_lens.model.corpora import Example
from attention_lens.model.engine.loader import load_engine

from tests.fixtures.checkpoints import ROOT

CKPT = ROOT / "checkpoints"
ALIGNED = {"everyday-en-fr-aligned": "everyday-en-fr", "everyday-de-en-aligned": "everyday-de-en"}

# Word-for-word pairs aligned by hand (source word - target word, 0-based), raw text as the models read it.
HAND = {
    "everyday-en-fr-aligned": [
        ("The cat is black.", "Le chat est noir.", "0-0 1-1 2-2 3-3"),
        ("My brother has a red car.", "Mon frère a une voiture rouge.", "0-0 1-1 2-2 3-3 5-4 4-5"),
        ("We are eating bread.", "Nous mangeons du pain.", "0-0 1-1 2-1 3-2 3-3"),
        ("She reads a book every day.", "Elle lit un livre chaque jour.", "0-0 1-1 2-2 3-3 4-4 5-5"),
        ("The children play in the garden.", "Les enfants jouent dans le jardin.",
         "0-0 1-1 2-2 3-3 4-4 5-5"),
    ],
    "everyday-de-en-aligned": [
        ("Die Katze ist schwarz.", "The cat is black.", "0-0 1-1 2-2 3-3"),
        ("Mein Bruder hat ein rotes Auto.", "My brother has a red car.", "0-0 1-1 2-2 3-3 4-4 5-5"),
        ("Sie liest jeden Tag ein Buch.", "She reads a book every day.", "0-0 1-1 2-4 3-5 4-2 5-3"),
        ("Die Kinder spielen im Garten.", "The children play in the garden.", "0-0 1-1 2-2 3-3 3-4 4-5"),
        ("Wir essen Brot.", "We eat bread.", "0-0 1-1 2-2"),
    ],
}


def card(name: str) -> dict:
    path = CKPT / name / "card.json"
    if not path.is_file():
        pytest.fail(f"{name} is not in checkpoints/")
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", ALIGNED)
def test_card_records_the_fine_tune_on_the_same_split(name):
    c, base = card(name), card(ALIGNED[name])
    assert c["init_from"]["path"] == f"checkpoints/{ALIGNED[name]}"
    assert (c["data"], c["seed"], c["test_pairs"], c["train_pairs"]) == (base["data"], base["seed"],
                                                                          base["test_pairs"], base["train_pairs"])
    g = c["guided_alignment"]
    assert g["supervised_pairs"] > 0.9 * c["train_pairs"]
    assert g["loss_last_100"] < g["loss_first_100"]
    assert g["method"].endswith(f"-{g['reading']}-L{g['layer']}H{g['head']}")


@pytest.mark.parametrize("name", ALIGNED)
def test_the_card_s_fine_tune_stages_add_up(name):
    """One fine-tune, or a chain of them (each from the one before, `fine_tune_stages`) and a weight mix with the
    chain's start: the steps the card gives the alignment training are the steps since its start, the stages begin
    at the card's start and add up to them, and a mix is with that start."""
    c = card(name)
    g, start = c["guided_alignment"], c["init_from"]
    assert g["steps"] == c["steps"] - start["steps"] > 0
    stages = c.get("fine_tune_stages", [])
    if stages:
        assert stages[0]["start"] == start["path"]
        assert sum(s["steps"] for s in stages) == g["steps"]
        assert sum(s["minutes"] for s in stages) == pytest.approx(g["minutes"], abs=0.1 * len(stages))
        assert g["loss_first_100"] == stages[0]["alignment_loss_first_100"]
        assert g["loss_last_100"] == stages[-1]["alignment_loss_last_100"]
    if "weights_mix" in c:
        assert c["weights_mix"]["b"] == start["path"] and 0 < c["weights_mix"]["alpha"] < 1


@pytest.mark.parametrize("name", ALIGNED)
def test_translates_within_one_chrf_of_its_start_and_stays_small(name):
    c, base = card(name), card(ALIGNED[name])
    assert c["test_metrics"]["n"] == base["test_metrics"]["n"]
    assert c["test_metrics"]["chrf"] >= base["test_metrics"]["chrf"] - 1.0
    size = sum(p.stat().st_size for p in (CKPT / name).iterdir())
    assert size <= 24 * 2**20 + 2**20


@pytest.mark.parametrize("name", ALIGNED)
def test_supervised_head_aligns_hand_aligned_pairs_better_than_before(name):
    method = card(name)["guided_alignment"]["method"]
    rows = [Example(s, t, g) for s, t, g in HAND[name]]
    aer = {}
    for model in (name, ALIGNED[name]):
        report = run_alignment(load_engine(CKPT / model), rows, method, progress=False)
        assert not report.skipped, report.skipped
        aer[model] = report.summary()["aer"]
    assert aer[name] < aer[ALIGNED[name]], aer
    assert aer[name] <= 0.2, aer
