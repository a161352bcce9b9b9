"""A long source's encoder tokens (more than explore.LONG_TOKENS, 40) sit in a box two chip rows high that
scrolls, with their count, instead of filling the first screen (a 108-token sentence's chips took nine rows at
1366 x 768 and pushed the picture below the fold); a short source's chips are shown whole, as before."""

from __future__ import annotations

import re

from tests.fixtures.apptest import shipped_app

SENTENCE = "The quick brown fox jumps over the lazy dog while the teacher explains attention to the class"


def _tokens(at) -> str:
    return next(m.value for m in at.markdown if "tokens fed to the encoder" in m.value)


def test_a_long_sources_tokens_scroll_in_a_two_row_box(monkeypatch):
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.text_input(key="source").set_value(SENTENCE).run()
    short = _tokens(at)
    assert "overflow-y" not in short
    long = " ".join([SENTENCE] * 6)
    at.text_input(key="source").set_value(long).run()
    chips = _tokens(at)
    n = len(re.findall(r"class='lens-chip[ ']", chips))  # one chip a token
    assert n > 100  # well past the 40 of explore.LONG_TOKENS
    assert "overflow-y: auto" in chips and "max-height" in chips and f"{n} tokens" in chips, chips[:300]
