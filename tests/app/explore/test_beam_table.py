"""The beam table: finished hypotheses, the winner among them, are listed with their own
log-probability; once the search has stopped, no live continuation past the final `.` is."""

from __future__ import annotations

import math

import pytest
from attention_lens.app.render.beams import beam_rows
from attention_lens.model.engine import DecodeOptions, load_engine

from tests.fixtures.checkpoints import shipped_checkpoint

SOURCE = "the black cat sat on the mat ."


@pytest.fixture(scope="module")
def engine():
    return load_engine(shipped_checkpoint("en-fr"))


@pytest.fixture(scope="module")
def run(engine):
    trace = engine.trace(SOURCE, options=DecodeOptions(mode="beam", beam_size=4))
    return trace, engine.special_pieces()


def test_last_step_lists_the_finished_hypotheses_and_the_winner(run):
    trace, special = run
    rows = beam_rows(trace, len(trace.beam_steps), special)
    assert [r["state"] for r in rows] == ["finished · chosen"] + ["finished"] * (len(trace.beams) - 1)
    assert rows[0]["text"] == "le chat noir s' assit sur le tapis ."
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


def test_each_hypothesis_is_listed_with_the_log_probability_of_its_pieces(run, engine):
    """The log-prob column, checked against the model itself: teacher-forced on a hypothesis's text, the sum of the
    log-probabilities of its pieces (none of the beam search's own bookkeeping)."""
    trace, special = run
    rows = beam_rows(trace, len(trace.beam_steps), special)
    assert len(rows) == 4
    for r in rows:
        forced = engine.trace(SOURCE, target=r["text"], options=DecodeOptions(mode="teacher_forced"))
        assert " ".join(forced.target_tokens) == r["pieces"]
        log_prob = sum(math.log(step.extra["target_prob"]) for step in forced.steps)
        assert r["log-prob"] == pytest.approx(log_prob, abs=1e-3)
        assert r["per piece"] == pytest.approx(log_prob / len(forced.steps), abs=1e-3)
    per_piece = [r["per piece"] for r in rows]
    assert per_piece == sorted(per_piece, reverse=True)  # ranked as the search ranks them: per piece


def test_rank_numbers_every_row_without_gaps_at_every_step():
    """rank is 1, 2, 3 … down the table at every step: never empty for a live beam, and no gap where a
    hypothesis that ranks between two finished ones has not finished yet (everyday-en-fr's finished 1 and 3 at
    step 6 of "Where is the train station?")."""
    engine = load_engine(shipped_checkpoint("everyday-en-fr"))
    trace = engine.trace("Where is the train station?", options=DecodeOptions(mode="beam", beam_size=4))
    special = engine.special_pieces()
    for step in range(1, len(trace.beam_steps) + 1):
        rows = beam_rows(trace, step, special)
        assert [r["rank"] for r in rows] == list(range(1, len(rows) + 1)), (step, rows)
