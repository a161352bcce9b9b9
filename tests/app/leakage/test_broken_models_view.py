"""The Leakage lab's broken-models view under AppTest, on the shipped models: it never feeds the
en-fr trio a sentence of another language."""

from __future__ import annotations

import json
from pathlib import Path

import streamlit as st
from attention_lens.app import registry
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[3]
PAGE = str(ROOT / "app" / "screens" / "leakage_lab.py")
EN_FR = next(p for p in json.loads((ROOT / "assets" / "presets.json").read_text(encoding="utf-8"))["presets"]
             if p["pair"] == "en-fr" and p.get("text", "conventions") == "conventions")  # the grammar trio's


def broken_view(monkeypatch, model: str) -> AppTest:
    monkeypatch.setattr(registry, "SOURCES", [registry.shipped_entries])
    monkeypatch.setenv("LENS_DEFAULT_MODEL", model)
    st.cache_resource.clear()
    at = AppTest.from_file(PAGE, default_timeout=300)
    at.session_state["model"] = model
    at.session_state["leak_view"] = "broken"
    at.session_state["leak_sample_n"] = 16
    return at.run()


def test_de_en_selected_the_trio_reads_the_english_example(monkeypatch):
    at = broken_view(monkeypatch, "de-en")
    assert not at.exception
    assert at.session_state["source"].startswith("Der Hund")  # the page's own sentence is the German preset
    shown = next(m.value for m in at.markdown if m.value.startswith("**On this sentence**"))
    assert EN_FR["source"] in shown and "Hund" not in shown
    assert any("instead" in i.value and "de-en" in i.value for i in at.info)
    healthy = next(c.value for c in at.caption if c.value.startswith("teacher-forced accuracy on this sentence"))
    assert healthy.endswith("**100%**"), healthy  # was 10% on the German sentence


def test_en_fr_selected_the_trio_reads_the_page_sentence(monkeypatch):
    at = broken_view(monkeypatch, "en-fr")
    assert not at.exception
    shown = next(m.value for m in at.markdown if m.value.startswith("**On this sentence**"))
    assert at.session_state["source"].split()[0] in shown
    assert not any("instead" in i.value for i in at.info)


def test_test_split_table_has_no_none_and_fits(monkeypatch):
    """One column per model (it showed ten measure columns, cut off at the page's width) and no `None` cell
    (the healthy model has no row reading its own answer, so no copy-diagonal weight to show)."""
    at = broken_view(monkeypatch, "en-fr")
    (table,) = [d.value for d in at.dataframe]
    extra = [m for m in ("en-fr-no-scaling",) if (ROOT / "checkpoints" / m / "config.json").is_file()]
    assert list(table.columns) == ["measure", "en-fr", "en-fr-no-causal-mask", "en-fr-no-shift", *extra]
    assert not table.isna().any().any()
    assert not table.map(lambda v: v is None or "None" in str(v) or "nan" in str(v)).any().any()
    copy = table.set_index("measure").loc["copy-diagonal weight, best head"]
    assert copy["en-fr"].startswith("—") and copy["en-fr-no-shift"].endswith(")")
