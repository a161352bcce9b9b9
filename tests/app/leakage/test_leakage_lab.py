"""The Leakage lab page under Streamlit's AppTest, on tiny random checkpoints named like the shipped trio."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import LEAKAGE, clear_caches, page_on
from tests.fixtures.apptest import figure as chart
from tests.fixtures.checkpoints import LEAKAGE_VARIANTS as VARIANTS
from tests.fixtures.checkpoints import build_leakage_trio

CAT, CHAT = "the cat sat .", "le chat s' assit ."


@pytest.fixture(scope="module")
def trio(tmp_path_factory) -> list[Path]:
    return build_leakage_trio(tmp_path_factory.mktemp("leak_models"))


def start(monkeypatch, folders: list[Path]) -> AppTest:
    return page_on(monkeypatch, LEAKAGE, folders, timeout=180, preset="custom", source=CAT, target=CHAT)


@pytest.fixture
def app(trio, monkeypatch):
    yield start(monkeypatch, trio)
    clear_caches()


def masked_overlays(spec: dict) -> int:
    return sum("masked" in t.get("hovertemplate", "") for t in spec["data"])


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_page_loads_with_switches_on(app):
    assert not app.exception and not app.error
    assert app.toggle(key="leak_causal").value and app.toggle(key="leak_shift").value
    assert masked_overlays(chart(app, "leak_heatmap")) > 0  # the hatched future is drawn
    assert metric(app, "Max future mass") == "0.0%"
    # key labels upright: at 45-55 degrees labels longer than a cell ran into each other ("5 est 6 _assis 7 _sur")
    layout = chart(app, "leak_heatmap")["layout"]
    assert {layout[a]["tickangle"] for a in layout if a.startswith("xaxis") and "tickangle" in layout[a]} == {-90}


def test_mask_switch_reveals_the_upper_triangle(app):
    app.toggle(key="leak_causal").set_value(False).run()
    assert not app.exception and not app.error
    assert masked_overlays(chart(app, "leak_heatmap")) == 0
    assert metric(app, "Max future mass") != "0.0%"
    assert any("zeroed *after* the softmax" in c.value for c in app.caption)


def test_shift_switch_makes_rows_read_their_answer(app):
    before = metric(app, "Rows reading the answer")
    app.toggle(key="leak_shift").set_value(False).run()
    assert not app.exception and not app.error
    after = metric(app, "Rows reading the answer")
    rows, m = (int(x) for x in after.split(" / "))
    assert rows == m and after != before
    assert len(chart(app, "leak_rows")["data"]) == 2  # future and own-answer bars
    # in the picture itself: every panel outlines each row's own-answer cell (row t, key t)
    boxes = [sh for sh in chart(app, "leak_heatmap")["layout"].get("shapes", []) if sh["line"]["color"] == "#c92a2a"]
    panels = {sh["xref"] for sh in boxes}
    assert len(panels) > 1 and len(boxes) == m * len(panels)
    assert all(sh["x0"] == sh["y0"] for sh in boxes)
    assert any("reads the very token it must predict" in c.value for c in app.caption)


def test_the_lab_takes_presenter_mode_from_its_link(trio, monkeypatch):
    at = page_on(monkeypatch, LEAKAGE, trio, timeout=180, preset="custom", source=CAT, target=CHAT)
    assert not at.exception
    at.query_params["present"] = "1"
    at.run()
    assert not [w.value for w in at.warning if "present" in w.value]
    assert at.toggle(key="present").value is True


def test_probe_view_passes_then_leaks(app):
    app.radio(key="leak_view").set_value("probe").run()
    assert not app.exception and not app.error
    assert any("PASS" in m.value for m in app.markdown)
    app.toggle(key="leak_causal").set_value(False).run()
    assert any("LEAKS" in m.value for m in app.markdown)
    chart(app, "leak_probe_bars")


def test_broken_models_view_renders(app):
    app.radio(key="leak_view").set_value("broken").run()
    assert not app.exception and not app.error
    chart(app, "leak_curves")
    for key in VARIANTS:
        chart(app, f"leak_sig_{key}")
    assert len(app.dataframe) == 1 and list(app.dataframe[0].value.columns)[1:] == list(VARIANTS)
    app.radio(key="leak_signature").set_value("copy_diagonal").run()
    assert not app.exception and not app.error


def test_broken_view_says_when_the_shipped_models_are_missing(trio, monkeypatch):
    at = start(monkeypatch, trio[:1])
    at.radio(key="leak_view").set_value("broken").run()
    assert not at.exception
    assert any("not installed" in w.value for w in at.warning)
    clear_caches()


def test_figure_builders_check_their_inputs():
    import numpy as np
    from attention_lens.app.render import leakage as lf

    fig = lf.head_heatmap(np.array([[0.1, np.nan]]), "t")
    assert list(fig.data[0].text[0]) == ["0.10", ""]
    with pytest.raises(ValueError):
        lf.head_heatmap(np.zeros(3), "t")
    with pytest.raises(ValueError):
        lf.row_bars(["a", "b"], np.zeros(3))
    bars = lf.probe_bars(["a", "b"], [0.0, 0.5], 1e-4)
    assert list(bars.data[0].text) == ["0", ""] and list(bars.data[0].marker.color) == [lf.OK_COLOR, lf.figures.ACCENT]
    curves = lf.training_curves({"x": {"step": [1, 2], "train_loss": [2, 1], "valid_tf_loss": [2, 1],
                                       "valid_tf_accuracy": [0.5, 0.9], "valid_exact_match": [0.0, 0.1]}})
    assert len(curves.data) == 4


def test_unsupported_switch_is_disabled_with_the_engines_reason(trio, monkeypatch):
    from attention_lens.model.builtin.engine import BuiltinEngine

    monkeypatch.setattr(BuiltinEngine, "supports_causal_switch", False, raising=False)
    monkeypatch.setattr(BuiltinEngine, "switch_notes", {"causal": "this family ignores custom masks"}, raising=False)
    at = start(monkeypatch, trio)
    assert not at.exception and not at.error
    toggle = at.toggle(key="leak_causal")
    assert toggle.disabled and toggle.value
    assert any("ignores custom masks" in c.value for c in at.caption)
    clear_caches()
