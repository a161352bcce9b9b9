"""Presenter mode's "Model & mode" box names each model as the
sidebar's box does (the name alone: the titles with their description were cut at the popover's width), and
Compare says which side's sentence it cannot run."""

from __future__ import annotations

from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import shipped_app

COMPARE = "screens/compare.py"


def test_presenter_model_box_shows_the_names_the_sidebar_shows(monkeypatch):
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    sidebar = at.sidebar.selectbox(key="model").options
    at.toggle(key="present").set_value(True).run()
    box = at.main.selectbox(key="present_model")
    assert box.options == sidebar, (box.options, sidebar)
    assert " · " not in "".join(box.options)
    assert box.value == "everyday-en-fr"


def _compare(monkeypatch) -> AppTest:
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.switch_page(COMPARE).run()
    return at


def test_compare_names_the_side_whose_sentence_is_empty(monkeypatch):
    at = _compare(monkeypatch)
    at.text_input(key="cmp_b_text").set_value("").run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("B:") and "empty" in errors[0], errors
    at.text_input(key="cmp_b_text").set_value("The man found the bank.").run()
    at.text_input(key="cmp_a_text").set_value("  ").run()
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("A:") and "empty" in errors[0], errors
