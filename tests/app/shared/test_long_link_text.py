"""A link whose text is longer than a page takes (`/?text=` of 100,000 characters) opens the page with the default
sentence and a notice that says how long the text is, the limit, and what to do; the rest of the page works and
the address bar no longer holds the long text. (That such a request reaches the app at all, past the HTTP server
and nginx: tests/test_long_links.py.)"""

from __future__ import annotations

from tests.fixtures.apptest import CAT, shipped_app

LONG = ("the cat sat on the mat . " * 4000)[:100_000]


def notice(at) -> str:
    return next(w.value for w in at.warning if "too long" in w.value)


def test_explore_says_the_links_text_is_too_long_and_shows_the_default(monkeypatch):
    at = shipped_app(monkeypatch, default="en-fr", timeout=90)
    at.query_params.update({"text": LONG, "target": "x" * 2500})
    at.run()
    assert not at.exception
    text = notice(at)
    assert "100,000 characters" in text and "at most 2,000" in text and "paste a part of it" in text
    target = next(w.value for w in at.warning if "reference target is too long" in w.value)
    assert "2,500 characters" in target
    source = at.session_state["source"]
    assert source != LONG and len(source) <= 2000 and source.strip()
    assert at.query_params["text"] == source  # the page's link is written back without the long text
    assert at.get("bidi_component"), "the stepper is drawn for the default sentence"


def test_another_page_says_it_too(monkeypatch):
    at = shipped_app(monkeypatch, default="en-fr", timeout=90, needs=("en-fr",)).run()
    for name in list(at.query_params):
        del at.query_params[name]
    at.query_params.update({"model": "en-fr", "text": LONG, "view": "probe"})
    at = at.switch_page("screens/leakage_lab.py").run()
    assert not at.exception
    assert "100,000 characters" in notice(at)
    assert at.session_state["source"] != LONG and at.radio(key="leak_view").value == "probe"


def test_a_text_of_the_longest_length_is_taken(monkeypatch):
    at = shipped_app(monkeypatch, default="en-fr", timeout=90)
    text = (CAT + " ") * (2000 // (len(CAT) + 1))
    at.query_params.update({"text": text})
    at.run()
    assert not at.exception and not [w for w in at.warning if "too long" in w.value]
    assert at.session_state["source"] == text
