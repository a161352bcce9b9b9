"""The force box never forces a token the user did not choose at this step: it opens empty at every step, with
"Force it" disabled until a token is chosen; a choice made at one step is gone at the next (the browser kept
the old choice and "Force it" forced it: `Le chat La` at step 3 of the everyday model)."""

from __future__ import annotations

from attention_lens.model.engine import load_engine

from tests.fixtures.apptest import shipped_app
from tests.fixtures.checkpoints import shipped_checkpoint


def test_a_choice_at_step_one_is_not_forced_two_steps_later(monkeypatch):
    at = shipped_app(monkeypatch, "en-fr", timeout=240)
    at.session_state["force_open"] = True  # the force box's expander, opened
    at.run()
    box = at.selectbox(key="force_choice")
    assert box.value is None and at.button(key="force").disabled  # nothing chosen: nothing to force
    picked = box.options[0]
    box.set_value(picked).run()
    assert not at.button(key="force").disabled
    for _ in range(2):
        at.button(key="next").click().run()
    assert at.session_state["step"] == 3
    assert at.selectbox(key="force_choice").value is None, at.selectbox(key="force_choice").value
    assert at.session_state["force_choice"] is None  # set anew (a popped key left the browser's box stale)
    assert at.button(key="force").disabled
    assert not at.session_state["forced"]


def typed(at, text: str) -> None:
    """Type `text` into the force box and take it as a new option, as the browser sends it (its string value)."""
    box = at.selectbox(key="force_choice")
    box.options.append(text)  # AppTest's selectbox knows the listed options only
    box.set_value(text).run()


def test_a_typed_word_is_looked_up_before_forcing(monkeypatch):
    """A word typed into the box (a new option) is named as the piece it forces; an unknown word is refused at
    once with a plain message and "Force it" disabled (it was enabled, and the message came only after a click)."""
    at = shipped_app(monkeypatch, "en-fr", timeout=240)
    at.session_state["force_open"] = True
    at.run()
    typed(at, "zzqxv")
    assert not at.exception
    assert at.button(key="force").disabled
    assert any("“zzqxv” is not a token of this model's target vocabulary" in w.value for w in at.warning)
    typed(at, "chien")  # the word, without its word mark
    assert not at.button(key="force").disabled and not at.warning
    assert any("▁chien" in c.value for c in at.caption)
    at.button(key="force").click().run()
    assert not at.exception
    chien = load_engine(shipped_checkpoint("en-fr")).piece_to_id("▁chien")
    assert at.session_state["forced"] and at.session_state["forced"][-1] == chien
