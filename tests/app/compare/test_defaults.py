"""The Compare page on the everyday model (the app's default): its default pair of sentences and two models on
one sentence both draw the difference at step 1 (a decoder row is compared wherever both sides read the same
token at the same position, whatever each then predicted)."""

from __future__ import annotations

from attention_lens.app.render import stepper as packing

from tests.fixtures.apptest import pair, shipped_app


def drawn_difference(at) -> tuple[list, list]:
    """The rows and columns of A − B the page's pair stepper draws at its step (pair.js; its Python twin)."""
    header, runs = pair(at)
    assert header["diff"]
    rows, cols, _ = packing.pair_difference(runs, header["step"])
    return rows, cols


def compare(monkeypatch, **state):
    at = shipped_app(monkeypatch, "everyday-en-fr", timeout=240, needs=("everyday-en-fr-no-causal-mask",)).run()
    for k, v in state.items():
        at.session_state[k] = v
    return at.switch_page("screens/compare.py").run()


def test_the_default_example_draws_a_difference_on_the_everyday_model(monkeypatch):
    at = compare(monkeypatch)
    assert not at.exception
    assert at.text_input(key="cmp_a_text").value[-1] != " " and not at.text_input(key="cmp_a_text").value.endswith(" .")
    rows, cols = drawn_difference(at)
    assert rows and cols


def test_two_models_on_one_sentence_draw_a_difference_at_step_one(monkeypatch):
    at = compare(monkeypatch)
    at.text_input(key="cmp_b_text").set_value(at.text_input(key="cmp_a_text").value).run()
    at.selectbox(key="cmp_b_model").set_value("everyday-en-fr-no-causal-mask").run()
    assert not at.exception
    assert at.slider(key="cmp_step").value == 1
    rows, cols = drawn_difference(at)
    assert rows == [0] and cols  # step 1: both read the start token; every source token matches
