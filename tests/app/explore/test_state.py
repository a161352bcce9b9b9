"""Explore's state under AppTest on the shipped en-fr model: links (query parameters) in and out, a bad
parameter's fallback, a new sentence in teacher forcing, and the preset view hint for 'bank'."""

from __future__ import annotations

import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import shipped_app
from tests.fixtures.checkpoints import ROOT, shipped_checkpoint


@pytest.fixture
def app(monkeypatch) -> AppTest:
    return shipped_app(monkeypatch)  # the shipped corpus model these checks read, not the app's default


def test_new_sentence_in_teacher_forcing_drops_the_presets_reference(app):
    at = app.run()
    assert at.session_state["target"] == "le chat s' assit ."
    at.radio(key="mode").set_value("teacher_forced").run()
    at.text_input(key="source").set_value("the old king found the bank .").run()
    # the preset's reference is dropped; the box opens on the model's own translation of the new sentence
    assert "chat" not in at.session_state["target"] and "roi" in at.session_state["target"]
    assert not any("le chat" in m.value for m in at.markdown)


def test_a_link_sets_the_page_and_bad_parameters_fall_back(app):
    app.query_params.update(text="the man found the bank .", kind="dec", view="head", layer="2", head="9",
                            step="abc", mode="warp", present="1")
    at = app.run()
    assert not at.exception
    assert at.session_state["source"] == "the man found the bank ." and at.session_state["preset"] == "bank-money"
    assert at.session_state["kind_keep"] == "decoder_self_attention" and at.session_state["view_keep"] == "head"
    assert at.session_state["layer_keep"] == 1 and at.session_state["head_keep"] == 0  # 4 heads: head 9 -> 1
    assert at.session_state["mode"] == "greedy" and at.session_state["present"] is True
    notices = " ".join(w.value for w in at.warning)
    assert "step=abc" in notices and "mode=warp" in notices and "head 9" in notices
    assert at.query_params["kind"] == "dec" and at.query_params["layer"] == "2"


def test_bank_preset_opens_on_the_head_where_bank_reads_river():
    from attention_lens.model.engine import load_engine

    presets = {p["id"]: p for p in json.loads((ROOT / "assets" / "presets.json").read_text())["presets"]}
    hint = presets["bank-river"]["view"]
    trace = load_engine(shipped_checkpoint("en-fr")).trace(presets["bank-river"]["source"])
    toks = trace.source_tokens
    bank, river = toks.index("▁bank"), toks.index("▁river")
    w = np.asarray(trace.encoder_self_attention)[:, :, bank, river]
    layer, head = np.unravel_index(w.argmax(), w.shape)
    assert (hint["kind"], hint["view"], hint["layer"], hint["head"]) == ("enc", "head", layer + 1, head + 1)


def test_tour_walks_its_stops_and_sets_each_view(app):
    at = app.run()
    at.button(key="tour_start").click().run()
    assert at.session_state["kind_keep"] == "encoder_self_attention" and at.session_state["view_keep"] == "head"
    assert at.session_state["source"] == "the dog sat near the bank of the river ."
    seen = []
    for _ in range(5):
        at.button(key="tour_next").click().run()
        assert not at.exception, at.exception
        seen.append((at.session_state["tour_stop"], at.session_state["model"], at.session_state["kind_keep"]))
    assert seen[1] == (2, "de-en", "cross_attention") and seen[2][2] == "decoder_self_attention"
    assert at.session_state["leak_view"] == "broken"
    at.button(key="tour_back").click().run()
    assert at.session_state["leak_causal"] is False and at.session_state["leak_shift"] is False


def test_a_long_source_opens_on_one_head(app):
    at = app.run()
    at.text_input(key="source").set_value(" ".join(["the cat sat on the mat ."] * 7)).run()
    assert not at.exception
    assert at.session_state["view_keep"] == "head"
    assert at.text_area(key="source").value.startswith("the cat sat")


def test_the_shipped_model_opens_a_custom_sentence_on_the_grid_without_a_notice(app):
    app.session_state["preset"] = "custom"
    app.session_state["source"] = "the black cat sat on the mat ."
    at = app.run()
    assert not at.exception
    assert at.session_state["view_keep"] == "grid" and at.segmented_control(key="view").value == "grid"
    assert not any("heads per kind" in c.value or "grid of all" in c.value for c in at.caption)
    at.button(key="next").click().run()
    assert not at.exception and at.session_state["step"] == 2 and at.segmented_control(key="view").value == "grid"


def test_the_decoding_mode_and_its_settings_survive_another_page(app):
    """Beam search (and its width) chosen on Explore is still chosen after a visit to another page, as the step,
    view and reading are (the sidebar's widgets are dropped by Streamlit while another page runs)."""
    at = app.run()
    at.radio(key="mode").set_value("beam").run()
    at.slider(key="beam_size").set_value(3).run()
    assert at.session_state["mode"] == "beam"
    at.switch_page("screens/heads.py").run()
    assert not at.exception
    at.switch_page("screens/explore/page.py").run()
    assert not at.exception
    assert at.session_state["mode"] == "beam" and at.session_state["beam_size"] == 3
    assert at.radio(key="mode").value == "beam"


def test_a_pasted_text_over_the_limit_keeps_its_first_2000_characters_and_says_so(app):
    at = app.run()
    long = ("the cat sat on the mat . " * 200)[:5000]
    at.text_input(key="source").set_value(long).run()
    assert not at.exception
    assert at.session_state["source"] == long[:2000]
    notes = [w.value for w in at.warning]
    assert any("5,000 characters; the first 2,000 are used" in n for n in notes), notes
    at.run()
    assert not any("5,000 characters" in w.value for w in at.warning)  # said once
