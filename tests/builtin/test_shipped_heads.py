"""`heads --json` on the shipped en-fr model (issue 14): the heads whose removal costs most include layer-3
cross-attention heads, and they are the heads that align best (per-head AER of `align`)."""

from __future__ import annotations

import json

import pytest

from model.cli import main
from tests.conftest import ROOT

CKPT = ROOT / "checkpoints" / "en-fr"
DATA = ROOT / "assets" / "data" / "en-fr.test.tsv"
PAIRS = "80"


def test_layer3_cross_heads_matter_most_and_align_best(capsys):
    if not (CKPT / "card.json").is_file():
        pytest.skip("needs the shipped checkpoints/en-fr")
    assert main(["heads", "--model", str(CKPT), "--data", str(DATA), "--limit", PAIRS, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["base_loss"] > 0 and len(result["heads"]) == 3 * 3 * 4
    top = result["heads"][:5]
    l3_cross = [h for h in top if h["kind"] == "cross" and h["layer"] == 3]
    assert len(l3_cross) >= 2, top
    assert main(["align", "--model", str(CKPT), "--data", str(DATA), "--limit", PAIRS, "--method",
                 "argmax-plain-mean", "--json", "--quiet"]) == 0
    aer = {(h["layer"], h["head"]): h["aer"] for h in json.loads(capsys.readouterr().out)["heads"]}
    best_aligning = sorted(aer, key=aer.get)[:2]
    most_important_cross = [(h["layer"], h["head"]) for h in result["heads"] if h["kind"] == "cross"][:2]
    assert set(best_aligning) == set(most_important_cross), (best_aligning, most_important_cross)
