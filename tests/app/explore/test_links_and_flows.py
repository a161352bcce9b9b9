"""Under AppTest on the shipped en-fr model: flows that do not dead-end (teacher forcing, forcing any
token, Heads -> Explore) and links that keep everything on the page (reading, forced tokens, heads off)."""

from __future__ import annotations

import pytest
from attention_lens.model.engine import DecodeOptions, load_engine
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ENTRY, shipped_app, stepper
from tests.fixtures.checkpoints import shipped_checkpoint

DOG = "the dog sat ."


@pytest.fixture(scope="module")
def engine():
    return load_engine(shipped_checkpoint("en-fr"))


@pytest.fixture
def app(monkeypatch) -> AppTest:
    return shipped_app(monkeypatch)  # the shipped corpus model these checks read, not the app's default


def typed(app: AppTest, source: str) -> AppTest:
    at = app.run()
    at.text_input(key="source").set_value(source).run()
    return at


def test_teacher_forcing_opens_on_the_models_own_translation(app, engine):
    at = typed(app, DOG)
    at.radio(key="mode").set_value("teacher_forced").run()
    assert not at.exception and not at.error
    own = engine.detokenize([s.id for s in engine.trace(DOG).steps])
    assert own and at.text_input(key="target").value == own
    assert at.query_params["mode"] == "teacher_forced" and at.query_params["target"] == own
    assert any("model's own translation" in c.value for c in at.caption)


def test_unknown_words_of_the_reference_are_named(app):
    at = typed(app, DOG)
    at.radio(key="mode").set_value("teacher_forced").run()
    at.text_input(key="target").set_value("le chien s'est assis .").run()
    assert not at.exception
    notice = " ".join(w.value for w in at.warning if "reference this model does not know" in w.value)
    assert "est" in notice and "assis" in notice and "chien" not in notice


def test_the_force_box_offers_the_whole_vocabulary_and_forces_a_word_outside_the_top_k(app, engine):
    at = typed(app, "the cat sat .")
    top = {t for t, _ in engine.trace("the cat sat .").steps[1].top_k}
    assert "▁chien" not in top
    at.slider(key="step").set_value(2).run()
    at.session_state["force_open"] = True  # the force box's expander, opened
    at.run()
    assert "▁chien" in at.selectbox(key="force_choice").options
    at.selectbox(key="force_choice").set_value("▁chien").run()
    at.button(key="force").click().run()
    assert not at.exception
    chien = engine.piece_to_id("▁chien")
    assert at.session_state["forced"][-1] == chien and len(at.session_state["forced"]) == 2
    assert at.query_params["forced"].split(",")[-1] == str(chien)


def test_a_link_keeps_the_reading_the_forced_tokens_and_the_heads_off(app, engine):
    at = typed(app, "the cat sat .")
    at.slider(key="step").set_value(2).run()
    at.session_state["force_open"] = True
    at.run()
    at.selectbox(key="force_choice").set_value("▁chien").run()
    at.button(key="force").click().run()
    at.segmented_control(key="reading").set_value("rollout").run()
    at.segmented_control(key="view").set_value("head").run()
    at.button(key="head_off").click().run()
    assert not at.exception
    params = {k: at.query_params[k] for k in at.query_params}
    assert params["reading"] == "rollout" and params["off"] == "cross:1:1" and params["forced"]

    fresh = AppTest.from_file(ENTRY, default_timeout=60)
    fresh.query_params.update(params)
    fresh.run()
    assert not fresh.exception and not [w for w in fresh.warning if "link" in w.value]
    assert fresh.session_state["forced"] == at.session_state["forced"]
    assert fresh.segmented_control(key="reading").value == "rollout"
    assert fresh.session_state["ablated"]["en-fr"] == ("cross:1:1",)
    assert fresh.session_state["step"] == at.session_state["step"]
    forced = engine.trace("the cat sat .", options=DecodeOptions(forced=tuple(at.session_state["forced"])))
    header, _ = stepper(fresh)
    assert "▁chien" in header["target"][: header["step"]]  # the output so far, as the stepper shows it
    assert forced.target_tokens[1] == "▁chien"


def test_heads_opens_exactly_the_clicked_head_at_the_step_explore_was_on(app):
    at = typed(app, "the cat sat .")
    at.slider(key="step").set_value(3).run()
    at.switch_page("screens/heads.py").run()
    at.select_slider(key="heads_n").set_value(25).run()
    at.button(key="heads_rank").click().run()
    at.button(key="open_dec_3_2").click().run()
    assert not at.exception
    assert at.segmented_control(key="view").value == "head" and at.segmented_control(key="kind").value == (
        "decoder_self_attention")
    assert (at.selectbox(key="layer").value, at.selectbox(key="head").value) == (2, 1)
    assert at.query_params["view"] == "head" and at.query_params["layer"] == "3" and at.query_params["head"] == "2"
    assert at.query_params["step"] == "3"
