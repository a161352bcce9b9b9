"""The Alignment page under Streamlit's AppTest, on a tiny random checkpoint named like the shipped en-fr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import registry
from tests.app.test_app import panels
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
    """The ECharts option of the chart with this key (app/screens/charts.py draws the page's charts)."""
    for c in at.get("echarts_chart"):
        if c.proto.id.endswith(f"-{key}"):
            return json.loads(c.proto.spec)
    raise AssertionError(f"no ECharts chart with key {key!r}")


def test_page_loads_with_preset_gold(app):
    assert not app.exception
    assert not app.error
    links = chart(app, "align_links")
    names = {t.get("name") for t in links["series"]}
    assert names & {"predicted · sure gold (hit)", "predicted · not in gold", "sure gold link missed"}
    assert set(links["legend"]["data"]) <= names
    words = [s for s in links["series"] if s["type"] == "scatter"]  # the two rows of words, as the model split them
    assert [[d["name"] for d in s["data"]] for s in words] == [["the", "cat", "sat", "."],
                                                               ["le", "chat", "s'", "assit", "."]]
    scores = next(h.value for h in app.html if "lens-scores" in h.value)  # HTML, not st.metric: no metric code
    assert [part.split("</span>")[0] for part in scores.split("<span>")[1:]] == ["AER", "Precision", "Recall"]
    assert not app.metric
    matrix = chart(app, "align_matrix")
    assert panels(matrix)[0].shape == (5, 4)  # target words x source words
    marks = {s["name"] for s in matrix["series"] if s["type"] == "scatter"}
    assert "sure gold" in marks and marks & {"predicted · sure gold (hit)", "predicted · not in gold"}
    assert not app.get("plotly_chart")  # the page loads no plotly code
    grid = next(h.value for h in app.html if "class='lens-aer'" in h.value)  # HTML, not a chart
    assert grid.count("<td ") == 2 * 4 and "AER per head" in grid  # the tiny model's 2 layers x 4 heads
    assert not app.get("arrow_data_frame") and not app.table  # no Arrow data: the browser loads no Arrow code
    assert ranking_rows(app) > 2 * 4


def ranking_rows(app) -> int:
    """Rows of the page's ranking table (static HTML in the `align_table` container)."""
    table = next(h.value for h in app.html if "lens-rank" in h.value and "<tbody>" in h.value)
    return table.split("<tbody>")[1].count("<tr>")


def test_changing_head_method_and_reading(app):
    app.selectbox(key="align_layer").set_value(2).run()
    app.selectbox(key="align_head").set_value(3).run()
    assert not app.exception and not app.error
    assert "L2H3" in chart(app, "align_links")["title"][0]["text"]
    app.selectbox(key="align_extract").set_value("threshold").run()
    app.radio(key="align_reading").set_value("shift").run()
    assert not app.exception and not app.error
    assert "shift reading" in chart(app, "align_matrix")["title"][0]["text"]
    app.segmented_control(key="align_table_selectors").set_value("heads").run()
    assert not app.exception
    assert ranking_rows(app) == 2 * 4


def test_custom_sentence_with_bad_gold_warns(app):
    app.session_state["preset"] = "custom"
    app.run()
    app.text_input(key="align_gold").set_value("0-0 9-9").run()
    assert not app.exception and not app.error
    assert any("Gold links ignored" in w.value for w in app.warning)
    app.text_input(key="target").set_value("").run()
    assert not app.exception and not app.error
