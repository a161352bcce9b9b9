"""An example's one-line note speaks of the view it was written for: the black-cat note ("watch 'chat' attend to
'cat'") is about cross-attention, so it is not shown under a decoder self-attention picture (the tour's
key-value cache stop drew it there, and it stayed after the tour closed)."""

from __future__ import annotations

from tests.fixtures.apptest import shipped_app

NOTE = "attend to 'cat'"


def notes(at) -> list[str]:
    return [c.value for c in at.caption if NOTE in c.value]


def test_the_tour_stop_on_decoder_attention_shows_no_cross_attention_note(monkeypatch):
    at = shipped_app(monkeypatch, "en-fr", timeout=240).run()
    at.button(key="tour_start").click().run()
    for _ in range(7):  # to the last stop: the key-value cache, decoder self-attention
        at.button(key="tour_next").click().run()
    assert not at.exception
    assert at.session_state["kind"] == "decoder_self_attention"
    assert at.session_state["preset"] == "black-cat"
    assert not notes(at), notes(at)
    at.button(key="tour_end").click().run()
    assert not notes(at), notes(at)
    at.segmented_control(key="kind").set_value("cross_attention").run()  # the view the note was written for
    assert notes(at)
