"""The Leakage lab's per-row chart on a healthy setting (mask on, shift on) says that nothing leaks instead of
drawing an empty axis; with the mask off its bars stand and no such note is drawn."""

from __future__ import annotations

import numpy as np
from attention_lens.app.render import leakage

from tests.fixtures.apptest import figure, shipped_app


def notes(spec: dict) -> str:
    return " ".join(a.get("text", "") for a in spec.get("layout", {}).get("annotations", []))


def test_the_healthy_per_row_chart_says_nothing_leaks(monkeypatch):
    at = shipped_app(monkeypatch, "en-fr", timeout=240).run()
    at.switch_page("screens/leakage_lab.py").run()
    assert not at.exception
    spec = figure(at, "leak_rows")
    assert "Nothing leaks" in notes(spec), notes(spec)


def test_a_leaking_chart_has_no_such_note():
    fig = leakage.row_bars(["a → b", "b → c"], np.array([0.4, 0.0]))
    assert "Nothing leaks" not in " ".join(a.text for a in fig.layout.annotations)
    fig = leakage.row_bars(["a → b", "b → c"], np.zeros(2), np.zeros(2))
    assert "Nothing leaks" in " ".join(a.text for a in fig.layout.annotations)
