"""A free-running decode that reached its length limit without writing the end token says so above the picture:
the translation on screen is cut there, not finished (the emoji sentence below runs everyday-en-fr greedily to its
50-token limit, repeating "de plus en plus"); one that ended says nothing."""

from __future__ import annotations

from tests.fixtures.apptest import shipped_app

CUT = "I love pizza 🍕🙂 so much 😀"


def _notes(at) -> list[str]:
    return [m.value for m in at.info if "length limit" in m.value]


def test_a_decode_cut_at_its_length_limit_is_named(monkeypatch):
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.text_input(key="source").set_value(CUT).run()
    notes = _notes(at)
    assert len(notes) == 1 and "50" in notes[0] and "end token" in notes[0], notes
    at.text_input(key="source").set_value("I love you.").run()
    assert _notes(at) == []
