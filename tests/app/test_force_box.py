"""The force box never forces a token the user did not choose at this step: it opens empty at every step, with
"Force it" disabled until a token is chosen; a choice made at one step is gone at the next (the browser kept
the old choice and "Force it" forced it: `Le chat La` at step 3 of the everyday model)."""

from __future__ import annotations

from tests.fixtures.apptest import shipped_app


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
