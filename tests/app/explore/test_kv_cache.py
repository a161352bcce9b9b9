"""Explore's key-value cache panel under AppTest on a tiny random checkpoint: the cache it draws and counts is
the one the engine really holds at that step, and the timed cached step equals its recompute."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import CAT, explore_on


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("kv") / "tiny-kv")


@pytest.fixture
def app(folder, monkeypatch) -> AppTest:
    return explore_on(monkeypatch, [folder], "tiny-kv", kv_open=True)  # the panel is drawn only while open


def cache_text(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "decoder layers holds" in m.value)


def test_cache_panel_counts_the_engines_real_cache(app, tiny_engine):
    assert not app.exception and not app.error
    n = len(tiny_engine.prepare_source(CAT)[1])
    assert cache_text(app).startswith("At step 1, each of the 2 decoder layers holds the keys and values of 1 target "
                                      f"position (0 reused, 1 computed now) and of the {n} source positions")
    table = next(h.proto.body for h in app.get("html") if "class='kv'" in h.proto.body)
    assert "with the cache" in table and "whole generation" in table
    app.button(key="next").click().run()
    app.button(key="next").click().run()
    assert "3 target positions (2 reused, 1 computed now)" in cache_text(app)
    app.toggle(key="kv_measure").set_value(True).run()
    assert not app.exception and not app.error
    assert next(m.value for m in app.metric if m.label == "Rows equal") == "yes"
    # The counted cache (3 self rows, n cross rows per layer) is what the engine's tensors held.
    assert any(f"before this step (2, {n}), after it (3, {n})" in c.value for c in app.caption)
