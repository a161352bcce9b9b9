"""The Alignment page under Streamlit's AppTest, on a tiny random checkpoint named like the shipped en-fr."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, page_on
from tests.fixtures.drawings import NS, drawings, texts


@pytest.fixture(scope="module")
def en_fr(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_app") / "en-fr")


@pytest.fixture
def app(en_fr, monkeypatch) -> AppTest:
    return page_on(monkeypatch, ALIGNMENT, [en_fr], preset="cat-sat", source="the cat sat .",
                   target="le chat s' assit .", align_n=20)


def test_page_loads_with_preset_gold(app):
    assert not app.exception
    assert not app.error
    shown = drawings(app)
    links = shown["align_links"]
    kinds = {g.get("class") for g in links.iter(f"{NS}g") if (g.get("class") or "").startswith("link ")}
    assert kinds & {"link hit", "link false", "link missed"}
    words = [[texts(g)[0] for g in links.iter(f"{NS}g") if g.get("class") == f"word {side}"]
             for side in ("source", "target")]
    assert words == [["the", "cat", "sat", "."], ["le", "chat", "s'", "assit", "."]]  # as the model split them
    scores = next(h.value for h in app.html if "lens-scores" in h.value)  # HTML, not st.metric: no metric code
    assert [part.split("</span>")[0] for part in scores.split("<span>")[1:]] == ["AER", "Precision", "Recall"]
    assert not app.metric
    matrix = shown["align_matrix"]
    assert len([r for r in matrix.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]) == 5 * 4  # target x source
    marks = set(texts(matrix))
    assert "sure gold" in marks and marks & {"predicted · sure gold (hit)", "predicted · not in gold"}
    assert not app.get("echarts_chart")  # the page loads no chart library's code at all
    assert not app.radio and not app.toggle and not app.get("button_group")  # nor radio, toggle, segmented code
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
    assert "L2H3" in texts(drawings(app)["align_links"])[0]
    app.selectbox(key="align_extract").set_value("threshold").run()
    app.selectbox(key="align_reading").set_value("shift").run()
    assert not app.exception and not app.error
    assert "shift reading" in texts(drawings(app)["align_matrix"])[0]
    app.selectbox(key="align_table_selectors").set_value("heads").run()
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


def test_typed_markup_is_drawn_as_text_and_cannot_end_the_drawing_script(app):
    app.session_state["preset"] = "custom"
    app.run()
    app.text_input(key="target").set_value("le chat </script><img src=x onerror=alert(1)> 🐶 .").run()
    assert not app.exception and not app.error
    body = next(h.value for h in app.html if "data-chart='align_links'" in h.value)
    assert body.count("</script>") == 1 and "<img" not in body  # the markup travels escaped inside the script
    words = [texts(g)[0] for g in drawings(app)["align_links"].iter(f"{NS}g") if g.get("class") == "word target"]
    assert "</script><img" in " ".join(words) and "🐶" in words
