"""What every visitor sees is computed once: the Leakage lab's test-split sample comes from the card."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from app import services
from model.analysis.leakage import CARD_SAMPLE, CARD_SAMPLE_N, SampleReport, card_sample
from model.engine import load_engine

CHECKPOINTS = Path(__file__).resolve().parents[2] / "checkpoints"
TRIO = ("en-fr", "en-fr-no-causal-mask", "en-fr-no-shift")


def card(name: str) -> dict:
    return json.loads((CHECKPOINTS / name / "card.json").read_text())


@pytest.mark.parametrize("name", TRIO)
def test_shipped_cards_hold_the_leakage_sample(name):
    kept = card(name)[CARD_SAMPLE]
    assert kept["n"] == CARD_SAMPLE_N and len(kept["outputs"]) == CARD_SAMPLE_N
    assert (kept["causal"], kept["shift"]) == (card(name)["trained_causal"], card(name)["trained_shift"])


def test_card_sample_is_what_the_measure_gives_now():
    """The kept figures are not stale: measured again (on the fast broken model), they are the same."""
    name = "en-fr-no-causal-mask"
    kept, again = card(name)[CARD_SAMPLE], card_sample(load_engine(str(CHECKPOINTS / name)), "en-fr")
    assert kept["outputs"] == again["outputs"]
    np.testing.assert_allclose(SampleReport.from_card(kept).next_position,
                               SampleReport.from_card(again).next_position, rtol=1e-9)
    assert {k: v for k, v in kept.items() if k.endswith(("accuracy", "match", "share"))} == pytest.approx(
        {k: v for k, v in again.items() if k.endswith(("accuracy", "match", "share"))})


def test_sample_measures_reads_the_card_and_measures_other_sizes(monkeypatch):
    calls = []

    def measured(*args):
        calls.append(args)
        raise AssertionError("measured instead of read from the card")

    services.sample_measures.clear()
    monkeypatch.setattr(services, "sample_report", measured)
    rep = services.sample_measures("en-fr-no-shift", CARD_SAMPLE_N)
    assert rep.n == CARD_SAMPLE_N and rep.repeat_share == card("en-fr-no-shift")[CARD_SAMPLE]["repeat_share"]
    assert rep.to_dict() == SampleReport.from_card(card("en-fr-no-shift")[CARD_SAMPLE]).to_dict()
    with pytest.raises(AssertionError, match="measured"):
        services.sample_measures("en-fr-no-shift", 16)  # not kept: measured (here: the stand-in raises)
    assert len(calls) == 1
    services.sample_measures.clear()
