"""Presenter mode's "Next token" picture shows the next-token bars instead of the attention: the attention's reading
switch and colour-scale box above it then act on nothing, and are greyed out (they stayed live, so a teacher
clicking them saw nothing change); back on "Attention" they work again."""

from __future__ import annotations

from tests.fixtures.apptest import shipped_app


def test_attention_only_controls_are_disabled_under_the_next_token_picture(monkeypatch):
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.toggle(key="present").set_value(True).run()
    assert not at.segmented_control(key="reading").disabled and not at.selectbox(key="scale").disabled
    at.segmented_control(key="present_picture").set_value("next").run()
    assert at.segmented_control(key="reading").disabled and at.selectbox(key="scale").disabled
    at.segmented_control(key="present_picture").set_value("attention").run()
    assert not at.segmented_control(key="reading").disabled and not at.selectbox(key="scale").disabled
