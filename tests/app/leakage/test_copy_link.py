"""The Leakage lab has a Copy link like Explore's: a popover, drawn empty while closed, that once opened holds
the page's link (model, sentence, view, switches), which opens the same page."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from tests.fixtures.apptest import share_links, shipped_app


def test_the_leakage_lab_offers_its_link(monkeypatch):
    at = shipped_app(monkeypatch, "en-fr", timeout=240).run()
    at.switch_page("screens/leakage_lab.py").run()
    assert not at.exception
    assert [p for p in at.get("popover") if "Copy link" in p.proto.popover.label]
    assert not share_links(at)  # closed: the link is not sent
    at.session_state["leak_share_open"] = True
    at.radio(key="leak_view").set_value("probe").run()
    assert not at.exception
    links = share_links(at)
    assert len(links) == 1, links
    params = {k: v[0] for k, v in parse_qs(urlparse(links[0]).query).items()}
    assert params["model"] == "en-fr" and params["view"] == "probe" and params["text"]
