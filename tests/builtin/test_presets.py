"""The classroom presets are the corpus's own reference sentences: same target, same gold links."""

import json

from attention_lens.model.builtin.normalise import normalise
from attention_lens.model.corpora import generate

from tests.fixtures.checkpoints import ROOT


def test_presets_match_the_generated_reference_pairs():
    presets = json.loads((ROOT / "assets" / "presets.json").read_text())["presets"]
    pairs = {}
    for pair in ("en-fr", "de-en"):
        for e in generate(pair, n_train=50, n_valid=5, n_test=5)["train"]:
            pairs[(pair, e.source.lower())] = (e.target, e.gold)
    grammar = [p for p in presets if p.get("text", "conventions") == "conventions"]
    assert len(grammar) >= 6
    for p in grammar:
        target, gold = pairs[(p["pair"], normalise(p["source"]).lower())]
        assert p["target"] == target, p["id"]
        assert p["gold"] == gold, p["id"]


def test_everyday_presets_are_typed_text_for_the_everyday_pairs():
    """The everyday models' presets are sentences as people type them (capitals, attached punctuation), with a
    reference translation and no gold links (none were written for them)."""
    presets = json.loads((ROOT / "assets" / "presets.json").read_text())["presets"]
    everyday = [p for p in presets if p.get("text") == "raw"]
    assert {p["pair"] for p in everyday} == {"en-fr", "de-en"}
    for p in everyday:
        assert p["source"][0].isupper() and p["source"][-1] in ".?!" and not p["source"].endswith(" ."), p["id"]
        assert p["target"].strip() and "gold" not in p, p["id"]
    sources = {p["source"] for p in everyday}
    assert {"The cat sat on the mat.", "I went to the bank to get a loan.", "We sat on the bank of the river.",
            "Der Hund, den die Katze jagte, bellte."} <= sources
