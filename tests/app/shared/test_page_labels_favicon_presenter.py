"""Small page details under AppTest on the shipped en-fr model: step buttons named in words, a favicon
served by this server, the Heads page's count and axes, the "switch this head off" chart's labels, presenter
mode the same however it is entered, and the tour's Leakage lab stops shown on the Leakage lab."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ENTRY, figure, shipped_app
from tests.fixtures.checkpoints import ROOT


@pytest.fixture
def app(monkeypatch) -> AppTest:
    return shipped_app(monkeypatch)  # the shipped corpus model these checks read, not the app's default


def test_step_buttons_are_named_in_words_not_by_their_icon(app):
    at = app.run()
    names = {key: at.button(key=key).label for key in ("reset", "back", "next", "end", "play")}
    assert names == {"reset": "First step", "back": "Back one step", "next": "Next step", "end": "Last step",
                     "play": "Play"}


def test_the_favicon_is_a_file_of_this_server_and_the_app_names_no_outside_address(app, monkeypatch):
    asked = []
    real = st.set_page_config
    monkeypatch.setattr(st, "set_page_config", lambda **kw: (asked.append(kw), real(**kw))[1])
    app.run()
    icon = asked[0]["page_icon"]
    assert Path(icon).is_file() and Path(icon).resolve().is_relative_to(ROOT)
    addresses = {m for f in (ROOT / "app").rglob("*.py") for m in re.findall(r"https?://[^\s'\"<>)]+", f.read_text())}
    assert addresses <= {"http://www.w3.org/2000/svg"}, addresses


def test_heads_page_counts_kinds_layers_and_heads_and_labels_its_grids(app):
    at = app.run()
    at.switch_page("screens/heads.py").run()
    captions = " ".join(c.value for c in at.caption)
    assert "3 kinds × 3 layers × 4 heads" in captions and "9 layers" not in captions
    at.select_slider(key="heads_n").set_value(25).run()
    at.button(key="heads_rank").click().run()
    for code in ("enc", "dec", "cross"):
        layout = figure(at, f"heads_{code}")["layout"]
        assert layout["xaxis"]["title"]["text"] == "head" and layout["yaxis"]["title"]["text"] == "layer"


def test_switch_this_head_off_chart_names_each_steps_token_with_room_for_its_labels(app):
    at = app.run()
    at.text_input(key="source").set_value("the cat sat .").run()
    at.segmented_control(key="view").set_value("head").run()
    at.button(key="head_off").click().run()
    spec = figure(at, "ablation_probs")
    layout = spec["layout"]
    assert layout["xaxis"]["ticktext"][:2] == ["1 le", "2 chat"]
    assert layout["xaxis"]["automargin"] and layout["yaxis"]["automargin"]
    assert layout["margin"]["b"] >= 60 and layout["margin"]["l"] >= 50  # rotated tokens, ticks beside the title


def test_presenter_mode_is_the_same_from_the_toggle_and_from_a_link(app, monkeypatch):
    at = app.run()
    at.toggle(key="present").set_value(True).run()
    by_toggle = at.segmented_control(key="view").value
    linked = AppTest.from_file(ENTRY, default_timeout=60)
    linked.query_params["present"] = "1"
    linked.run()
    assert by_toggle == linked.segmented_control(key="view").value == "head"
    for page in (at, linked):  # the sidebar is hidden: its model and mode are reachable on the page
        assert page.main.selectbox(key="present_model").value == "en-fr"
        page.main.radio(key="present_mode").set_value("beam").run()
        assert page.session_state["mode"] == "beam" and page.query_params["mode"] == "beam"


def test_tour_stops_on_the_leakage_lab_show_the_leakage_lab(app):
    at = app.run()
    at.button(key="tour_start").click().run()
    for _ in range(4):
        at.button(key="tour_next").click().run()
    assert not at.exception
    assert [t.value for t in at.title] == ["Leakage lab"]
    assert at.toggle(key="leak_causal").value is False and at.toggle(key="leak_shift").value is False
    at.button(key="tour_next").click().run()
    assert [t.value for t in at.title] == ["Leakage lab"] and at.radio(key="leak_view").value == "broken"
    at.button(key="tour_back").click().run()
    at.button(key="tour_back").click().run()
    assert [t.value for t in at.title] == ["Attention Lens"] and at.session_state["kind_keep"] == (
        "decoder_self_attention")
