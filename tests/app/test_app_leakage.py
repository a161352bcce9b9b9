"""The Leakage lab page under Streamlit's AppTest, on tiny random checkpoints named like the shipped trio."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from app import registry
from tests.conftest import build_tiny_checkpoint

APP = Path(__file__).resolve().parents[2] / "app"
PAGE = str(APP / "screens" / "leakage_lab.py")



CAT, CHAT = "the cat sat .", "le chat s' assit ."
VARIANTS = {"en-fr": (True, True), "en-fr-no-causal-mask": (False, True), "en-fr-no-shift": (True, False)}
LOG = ("step,train_loss,seconds,valid_tf_loss,valid_tf_accuracy,valid_exact_match\n"
       "10,3.0,1,2.5,0.3,0.0\n20,2.0,2,1.5,0.6,0.1\n")


def write_trio(root: Path) -> list[Path]:
    folders = []
    for i, (name, (causal, shift)) in enumerate(VARIANTS.items()):
        folder = build_tiny_checkpoint(root / name, seed=i)
        card = json.loads((folder / "card.json").read_text())
        card.update(variant=name.removeprefix("en-fr-") if name != "en-fr" else "healthy", trained_causal=causal,
                    trained_shift=shift, test_metrics={"teacher_forced_accuracy": 0.5, "exact_match": 0.1})
        (folder / "card.json").write_text(json.dumps(card))
        (folder / "train_log.csv").write_text(LOG)
        folders.append(folder)
    return folders


@pytest.fixture(scope="module")
def trio(tmp_path_factory) -> list[Path]:
    return write_trio(tmp_path_factory.mktemp("leak_models"))


def start(monkeypatch, folders: list[Path]) -> AppTest:
    # Only these folders, whatever checkpoints/ holds, and no engine cached under the same key by another test.
    monkeypatch.setattr(registry, "SOURCES", [registry.operator_entries])
    monkeypatch.setenv("LENS_MODEL_DIRS", os.pathsep.join(str(p) for p in folders))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", "en-fr")
    st.cache_resource.clear()
    st.cache_data.clear()
    at = AppTest.from_file(PAGE, default_timeout=180)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = CAT
    at.session_state["target"] = CHAT
    return at.run()


@pytest.fixture
def app(trio, monkeypatch):
    yield start(monkeypatch, trio)
    st.cache_resource.clear()
    st.cache_data.clear()


def chart(at: AppTest, key: str) -> dict:
    for c in at.get("plotly_chart"):
        if c.proto.id.endswith(f"-{key}"):
            return json.loads(c.proto.spec)
    raise AssertionError(f"no plotly chart with key {key!r}")


def masked_overlays(spec: dict) -> int:
    return sum("masked" in t.get("hovertemplate", "") for t in spec["data"])


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def test_page_loads_with_switches_on(app):
    assert not app.exception and not app.error
    assert app.toggle(key="leak_causal").value and app.toggle(key="leak_shift").value
    assert masked_overlays(chart(app, "leak_heatmap")) > 0  # the hatched future is drawn
    assert metric(app, "Max future mass") == "0.0%"


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
    st.cache_resource.clear()
    st.cache_data.clear()


def test_figure_builders_check_their_inputs():
    import numpy as np

    from app.render import leakage as lf

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
    from model.builtin.engine import BuiltinEngine

    monkeypatch.setattr(BuiltinEngine, "supports_causal_switch", False, raising=False)
    monkeypatch.setattr(BuiltinEngine, "switch_notes", {"causal": "this family ignores custom masks"}, raising=False)
    at = start(monkeypatch, trio)
    assert not at.exception and not at.error
    toggle = at.toggle(key="leak_causal")
    assert toggle.disabled and toggle.value
    assert any("ignores custom masks" in c.value for c in at.caption)
    st.cache_resource.clear()
    st.cache_data.clear()
