"""The README's table "Which heads matter, and do they align?" on the shipped en-fr model: `heads --json` ranks
layer-3 cross-attention heads among the costliest to switch off, the upper layers' cross heads align far better
than layer 1's (per-head AER, argmax, plain reading: L3H2 best, 0.03; layer 1 above 0.6), and the head that costs
most (L3H1) is not the best aligner: what a head carries to the prediction need not be the aligned word."""

from __future__ import annotations

import json

from attention_lens.model.analysis.alignment import run_alignment
from attention_lens.model.analysis.alignment.methods import Method
from attention_lens.model.cli import main
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine.loader import load_engine

from tests.fixtures.checkpoints import ROOT, shipped_checkpoint

DATA = ROOT / "assets" / "data" / "en-fr.test.tsv"


def test_layer3_cross_heads_cost_most_and_upper_layers_align_better_than_layer1(capsys):
    ckpt = shipped_checkpoint("en-fr")
    assert main(["heads", "--model", str(ckpt), "--data", str(DATA), "--limit", "80", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["base_loss"] > 0 and len(result["heads"]) == 3 * 3 * 4
    top = result["heads"][:5]
    assert len([h for h in top if h["kind"] == "cross" and h["layer"] == 3]) >= 2, top

    engine = load_engine(ckpt)
    tally = run_alignment(engine, read_tsv(DATA)[:100], "argmax-plain-mean", progress=False).tally
    aer = {(layer, head): tally[Method("argmax", "plain", layer, head)].aer
           for layer in (1, 2, 3) for head in range(1, engine.n_heads + 1)}
    best = min(aer, key=aer.get)
    assert best[0] == 3 and aer[best] < 0.1, aer
    assert max(aer[3, h] for h in range(1, 5)) < min(aer[1, h] for h in range(1, 5)), aer
    costliest = next(h for h in result["heads"] if h["kind"] == "cross")
    assert (costliest["layer"], costliest["head"]) != best  # matters most, yet not the best aligner
