"""The Compare page in a real browser: a comparison link opened in a new browser context (no session,
no history) reproduces both sides, the view and the step, and writes the same parameters back."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, IDLE, PAIR, PAIR_DIFF, browser_page
from harness.models.tiny import build_tiny_checkpoint
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]
LINK = {"model": "tiny-a", "a_text": "the cat sat .", "b_model": "tiny-b", "b_text": "the cat sat on the mat .",
        "kind": "enc", "layer": "2", "head": "3", "step": "2"}
# Two model names as long as the shipped ones (en-fr-no-causal-mask) and a layer's mean: the longest titles.
LONG = {"model": "tiny-healthy-en-fr", "a_text": "the cat sat .", "b_model": "tiny-en-fr-no-causal-mask",
        "b_text": "the cat sat .", "kind": "cross", "layer": "2", "head": "0", "step": "2"}
# JS: how far (px) each line of each side's title runs past the right edge of its side (> 0: the title is cut), or
# 1 where a line is clipped inside its own box.
TITLE_OVERFLOW = """() => [...document.querySelectorAll('.st-key-cmp_pair .lens-pair-run')].flatMap(run =>
    [...run.querySelectorAll('.lens-pair-title > div')].map(t => t.scrollWidth > t.clientWidth + 1 ? 1
        : t.getBoundingClientRect().right - run.getBoundingClientRect().right))"""
# Each side's title (pair.js): its two lines, the side's name and what it shows.
TITLE = ".st-key-cmp_pair .lens-pair-run:nth-child({}) .lens-pair-title"


@pytest.fixture
def server(tmp_path, app_server):
    models = (build_tiny_checkpoint(tmp_path / "tiny-a"), build_tiny_checkpoint(tmp_path / "tiny-b", seed=1),
              build_tiny_checkpoint(tmp_path / LONG["model"]), build_tiny_checkpoint(tmp_path / LONG["b_model"], seed=1))  # noqa: E501
    return app_server(app_env(LENS_MODEL_DIRS=os.pathsep.join(str(m) for m in models), LENS_DEFAULT_MODEL="tiny-a"))


def test_a_comparison_link_in_a_new_context_reproduces_both_sides(server):
    from playwright.sync_api import expect

    # a fresh browser: a new context, no session, no history
    with browser_page(f"{server}/Compare?{urllib.parse.urlencode(LINK)}", 1366, 768) as page:
        expect(page.locator(".st-key-cmp_a_text input")).to_have_value(LINK["a_text"], timeout=90_000)
        expect(page.locator(".st-key-cmp_b_text input")).to_have_value(LINK["b_text"], timeout=90_000)
        expect(page.locator(".st-key-cmp_b_model").get_by_role("combobox")).to_have_value("tiny-b", timeout=90_000)
        for side, model in ((1, "A: tiny-a"), (2, "B: tiny-b")):
            title = page.locator(TITLE.format(side))
            expect(title).to_contain_text(model, timeout=90_000)
            expect(title).to_contain_text("Encoder self-attention · layer 2 · head 3", timeout=90_000)
        expect(page.locator(PAIR_DIFF)).to_contain_text("A − B", timeout=90_000)
        expect(page.locator(PAIR)).to_have_attribute("data-step", LINK["step"], timeout=90_000)
        page.locator(IDLE).wait_for(timeout=90_000)
        written = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(page.url).query))
        assert {k: written[k] for k in LINK} == LINK


def test_each_side_names_its_model_and_view_in_full_at_1366(server):
    """Long model names and a layer's mean: each picture's title stays inside its half of the page."""
    from playwright.sync_api import expect

    with browser_page(f"{server}/Compare?{urllib.parse.urlencode(LONG)}", 1366, 768) as page:
        title_b = page.locator(TITLE.format(2))
        expect(title_b).to_contain_text(f"B: {LONG['b_model']}", timeout=90_000)
        expect(title_b).to_contain_text("Cross-attention · layer 2 · mean over heads", timeout=90_000)
        page.locator(IDLE).wait_for(timeout=90_000)
        overflow = page.evaluate(TITLE_OVERFLOW)
        assert len(overflow) == 4 and max(overflow) <= 0, overflow  # two lines a side

