"""The classroom presets are the corpus's own reference sentences: same target, same gold links."""

import json

from model.builtin.normalise import normalise
from model.corpora import generate
from tests.conftest import ROOT


def test_presets_match_the_generated_reference_pairs():
    presets = json.loads((ROOT / "assets" / "presets.json").read_text())["presets"]
    pairs = {}
    for pair in ("en-fr", "de-en"):
        for e in generate(pair, n_train=50, n_valid=5, n_test=5)["train"]:
            pairs[(pair, e.source.lower())] = (e.target, e.gold)
    assert len(presets) >= 6
    for p in presets:
        target, gold = pairs[(p["pair"], normalise(p["source"]).lower())]
        assert p["target"] == target, p["id"]
        assert p["gold"] == gold, p["id"]
