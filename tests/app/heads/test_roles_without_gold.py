"""The Heads page's roles on pairs without gold links (the everyday models' test split, a file without a gold
column): the rule's `aligning` needs gold, so no cross-attention head can be named aligning; the page says so
instead of leaving every cross-attention head "mixed" or "broad" unexplained."""

from __future__ import annotations

from attention_lens.app.screens.heads_roles import no_gold_note
from attention_lens.model.analysis.head_roles import head_roles
from attention_lens.model.corpora import Example
from attention_lens.model.engine import load_engine

from tests.fixtures.checkpoints import shipped_checkpoint

PAIRS = [("The cat is sleeping.", "Le chat dort."), ("Where is the station?", "Où est la gare ?")]


def test_pairs_without_gold_get_the_note():
    engine = load_engine(shipped_checkpoint("everyday-en-fr"))
    result = head_roles(engine, [Example(s, t, "") for s, t in PAIRS])
    assert not [h for h in result["heads"] if h["role"] == "aligning"]
    note = no_gold_note(result)
    assert note and "gold" in note and "aligning" in note and "Alignment page" in note


def test_pairs_with_gold_get_no_note():
    engine = load_engine(shipped_checkpoint("en-fr"))
    result = head_roles(engine, [Example("the cat sat .", "le chat s' assit .", "0-0 1-1 2-2 2-3 3-4")])
    assert no_gold_note(result) is None
