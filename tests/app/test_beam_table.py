"""The beam table (issue 15): finished hypotheses, the winner among them, are listed; once the search has
stopped, no live continuation past the final `.` is."""

from __future__ import annotations

import pytest

from app.render.beams import beam_rows
from model.engine import DecodeOptions, load_engine
from tests.conftest import ROOT


@pytest.fixture(scope="module")
def run():
    engine = load_engine(ROOT / "checkpoints" / "en-fr")
    trace = engine.trace("the black cat sat on the mat .", options=DecodeOptions(mode="beam", beam_size=4))
    return trace, engine.special_pieces()


def test_last_step_lists_the_finished_hypotheses_and_the_winner(run):
    trace, special = run
    rows = beam_rows(trace, len(trace.beam_steps), special)
    assert [r["state"] for r in rows] == ["finished · chosen"] + ["finished"] * (len(trace.beams) - 1)
    assert rows[0]["text"] == "le chat noir s' assit sur le tapis ."
    assert [r["log-prob"] for r in rows] == [round(b.options["score"], 3) for b in trace.beams]
    for r in rows:  # nothing written after the end of the sentence
        pieces = r["pieces"].split()
        assert pieces[-1] == "</s>" and "</s>" not in pieces[:-1]
        assert pieces.index("▁.") == len(pieces) - 2


def test_before_the_end_the_live_beams_and_no_finished_one(run):
    trace, special = run
    rows = beam_rows(trace, 3, special)
    assert [r["state"] for r in rows] == ["live"] * len(trace.beam_steps[2])
    assert rows[0]["text"] == "le chat noir"
    assert beam_rows(trace, 999, special) == beam_rows(trace, len(trace.beam_steps), special)
