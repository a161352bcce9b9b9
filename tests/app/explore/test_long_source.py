"""A sentence longer than the one-line box (state.LONG_SOURCE characters) is kept when the box becomes a
multi-line one: it was emptied ("The source text is empty") on the run that switched the widget."""

from __future__ import annotations

from pathlib import Path

from attention_lens.app import state
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import stepper

APP = Path(__file__).resolve().parents[3] / "app" / "streamlit_app.py"
LONG = ("the black cat that the small dog chased sat on the mat near the bank of the river because the old king "
        "found the red book .")


def test_a_long_sentence_survives_the_switch_to_the_multiline_box():
    assert len(LONG) > state.LONG_SOURCE
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.text_input(key="source").set_value(LONG).run()
    assert not at.exception and not at.error
    assert at.text_area(key="source").value == LONG
    header, _ = stepper(at)  # the run was decoded and handed to Explore's stepper
    assert header["step"] == 1 and header["m"] > 1 and len(header["source"]) > 20
