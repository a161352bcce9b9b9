"""Explore's export, share and key-value cache panels are drawn only while open (a Next click redrew
their buttons, link and drawing on every step), and open they work as before and stay open while stepping."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import explore_on, share_links

DOWNLOADS = {"dl_html", "dl_csv", "dl_json", "dl_npz"}


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("lazy") / "tiny-lazy")


@pytest.fixture
def app(folder, monkeypatch) -> AppTest:
    return explore_on(monkeypatch, [folder], "tiny-lazy")


def downloads(at: AppTest) -> set[str]:
    return {b.key for b in at.get("download_button")}


def links(at: AppTest) -> list[str]:
    return share_links(at)


def cache_drawn(at: AppTest) -> bool:
    return any("decoder layers holds" in m.value for m in at.markdown)


def test_closed_panels_send_only_their_headers(app):
    assert not app.exception
    labels = {e.label for e in app.get("expander")}
    assert {"Export this run", "Key–value cache at this step"} <= labels
    assert downloads(app) == set() and links(app) == [] and not cache_drawn(app)
    app.button(key="next").click().run()
    assert downloads(app) == set() and links(app) == [] and not cache_drawn(app)


def test_opened_panels_draw_and_stay_open_while_stepping(app):
    app.session_state["export_open"] = True
    app.session_state["share_open"] = True
    app.session_state["kv_open"] = True
    app.run()
    assert not app.exception
    assert downloads(app) >= DOWNLOADS
    assert len(links(app)) == 1 and "step=1" in links(app)[0]
    assert cache_drawn(app)
    app.button(key="next").click().run()
    assert not app.exception and app.session_state["step"] == 2
    assert downloads(app) >= DOWNLOADS and "step=2" in links(app)[0] and cache_drawn(app)
    app.session_state["export_open"] = False
    app.run()
    assert downloads(app) == set() and cache_drawn(app)
