"""The Alignment page's link carries the gold links typed in its box (`gold`), so a link an engineer shares
opens on the same sentence scored against the same links (it kept the sentence and the method, and the typed
links were lost)."""

from __future__ import annotations

from tests.fixtures.apptest import shipped_app

GOLD = "0-0 1-1 2-2 2-3 3-4 4-5 5-6"


def test_typed_gold_links_go_into_the_link_and_come_back_from_it(monkeypatch):
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.switch_page("screens/alignment.py").run()
    at.text_input(key="align_gold").set_value(GOLD).run()
    link = {k: at.query_params[k] for k in at.query_params}
    assert link.get("gold") == GOLD, link
    scored = _scores(at)

    fresh = shipped_app(monkeypatch, default="everyday-en-fr").run()
    for name in list(fresh.query_params):
        del fresh.query_params[name]
    fresh.query_params.update(link)
    fresh.switch_page("screens/alignment.py").run()
    assert not fresh.exception and fresh.text_input(key="align_gold").value == GOLD
    assert _scores(fresh) == scored != []


def _scores(at) -> list[str]:
    """The sentence's AER, precision and recall boxes (st.html) as the page drew them."""
    return [e.proto.body for e in at.get("html") if "AER" in e.proto.body]
