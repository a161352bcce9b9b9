"""Explore's top rows under AppTest on the shipped en-fr model: an example's own sentence typed exactly is that
example (the picker said "your own sentence"), and the colour-scale box says what it scales (it read "0 – 1"
alone, its label collapsed)."""

from __future__ import annotations

import pytest

from tests.fixtures.apptest import shipped_app


@pytest.fixture
def app(monkeypatch):
    return shipped_app(monkeypatch)


def test_an_examples_sentence_typed_exactly_is_that_example_and_keeps_the_view(app):
    at = app.run()
    at.text_input(key="source").set_value("the old king found the bank .").run()
    assert at.session_state["preset"] == "custom" and at.session_state["target"] == ""
    view = (at.session_state["kind_keep"], at.session_state["view_keep"])
    at.text_input(key="source").set_value("the man found the bank .").run()
    assert not at.exception
    assert at.session_state["preset"] == "bank-money"
    assert at.selectbox(key="preset").value == "bank-money"
    assert at.session_state["target"] == "l' homme trouva la banque ."  # its reference, none being typed
    # its view hint (encoder self-attention, one head) is for choosing it in the picker: the view stays
    assert (at.session_state["kind_keep"], at.session_state["view_keep"]) == view
    # and a sentence that differs by a word is the reader's own again
    at.text_input(key="source").set_value("the man found the river .").run()
    assert at.session_state["preset"] == "custom" and at.session_state["target"] == ""


def test_the_colour_scale_box_names_what_it_scales(app):
    at = app.run()
    box = at.selectbox(key="scale")
    assert box.options == ["Colours 0 – 1", "Colours 0 – max"]
    # its label is collapsed on screen; a screen reader reads it as the box's name, both choices in it
    assert "Colour scale of the attention picture" in box.label and "largest weight" in box.label
