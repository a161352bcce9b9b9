"""The Compare page on the everyday model (the app's default): its default pair of sentences and two models on
one sentence both draw the difference at step 1 (a decoder row is compared wherever both sides read the same
token at the same position, whatever each then predicted)."""

from __future__ import annotations

from tests.fixtures.apptest import figure, shipped_app

NOTHING = "No row and column carry the same token"


def compare(monkeypatch, **state):
    at = shipped_app(monkeypatch, "everyday-en-fr", timeout=240, needs=("everyday-en-fr-no-causal-mask",)).run()
    for k, v in state.items():
        at.session_state[k] = v
    return at.switch_page("screens/compare.py").run()


def test_the_default_example_draws_a_difference_on_the_everyday_model(monkeypatch):
    at = compare(monkeypatch)
    assert not at.exception
    assert not [i for i in at.info if NOTHING in i.value]
    assert at.text_input(key="cmp_a_text").value[-1] != " " and not at.text_input(key="cmp_a_text").value.endswith(" .")
    assert figure(at, "cmp_diff")["data"]


def test_two_models_on_one_sentence_draw_a_difference_at_step_one(monkeypatch):
    at = compare(monkeypatch)
    at.text_input(key="cmp_b_text").set_value(at.text_input(key="cmp_a_text").value).run()
    at.selectbox(key="cmp_b_model").set_value("everyday-en-fr-no-causal-mask").run()
    assert not at.exception
    assert at.slider(key="cmp_step").value == 1
    assert not [i for i in at.info if NOTHING in i.value]
    assert figure(at, "cmp_diff")["data"]
