"""The Alignment page under Streamlit's AppTest, on a tiny random checkpoint named like the shipped en-fr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import registry
from tests.conftest import build_tiny_checkpoint

APP = Path(__file__).resolve().parents[2] / "app"
PAGE = str(APP / "screens" / "alignment.py")




@pytest.fixture(scope="module")
def en_fr(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_app") / "en-fr")


@pytest.fixture
def app(en_fr, monkeypatch) -> AppTest:
    monkeypatch.setattr(registry, "SOURCES", [registry.operator_entries])
    monkeypatch.setenv("LENS_MODEL_DIRS", str(en_fr))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", "en-fr")
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(PAGE, default_timeout=90)
    at.session_state["preset"] = "cat-sat"
    at.session_state["source"] = "the cat sat ."
    at.session_state["target"] = "le chat s' assit ."
    at.session_state["align_n"] = 20
    return at.run()


def chart(at: AppTest, key: str) -> dict:
    for c in at.get("plotly_chart"):
        if c.proto.id.endswith(f"-{key}"):
            return json.loads(c.proto.spec)
    raise AssertionError(f"no plotly chart with key {key!r}")


def test_page_loads_with_preset_gold(app):
    assert not app.exception
    assert not app.error
    links = chart(app, "align_links")
    names = {t.get("name") for t in links["data"]}
    assert names & {"predicted · sure gold (hit)", "predicted · not in gold", "sure gold link missed"}
    assert [m.label for m in app.metric] == ["AER", "Precision", "Recall"]
    chart(app, "align_matrix")
    grid = next(m.value for m in app.markdown if "class='lens-aer'" in m.value)  # HTML, not a chart
    assert grid.count("<td ") == 2 * 4 and "AER per head" in grid  # the tiny model's 2 layers x 4 heads
    assert not app.get("arrow_data_frame") and len(app.table[0].value) > 0


def test_changing_head_method_and_reading(app):
    app.selectbox(key="align_layer").set_value(2).run()
    app.selectbox(key="align_head").set_value(3).run()
    assert not app.exception and not app.error
    assert "L2H3" in chart(app, "align_links")["layout"]["title"]["text"]
    app.selectbox(key="align_extract").set_value("threshold").run()
    app.radio(key="align_reading").set_value("shift").run()
    assert not app.exception and not app.error
    assert "shift reading" in chart(app, "align_matrix")["layout"]["title"]["text"]
    app.segmented_control(key="align_table_selectors").set_value("heads").run()
    assert not app.exception
    assert len(app.table[0].value) == 2 * 4


def test_custom_sentence_with_bad_gold_warns(app):
    app.session_state["preset"] = "custom"
    app.run()
    app.text_input(key="align_gold").set_value("0-0 9-9").run()
    assert not app.exception and not app.error
    assert any("Gold links ignored" in w.value for w in app.warning)
    app.text_input(key="target").set_value("").run()
    assert not app.exception and not app.error
