"""Presenter mode in Chromium (shipped en-fr model): no sidebar, every text of the picture, the chips and the
captions at least 18 px; and the README's screenshots (LENS_UPDATE_SCREENSHOT=1 writes them to assets/)."""

from __future__ import annotations

import os

import pytest

from tests.browser import explore_browser as eb
from tests.browser.explore_browser import open_page
from tests.fixtures.browser import ROOT, ROW_SHOWN

pytestmark = [pytest.mark.browser]
server = eb.shipped_server
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
BLACK_CAT = "?text=the+black+cat+sat+on+the+mat+.&mode=greedy&step=5&kind=cross"
# JS: the smallest font size (px) of the visible texts in the attention picture, the chips and the captions.
SMALLEST = """() => { const els = [...document.querySelectorAll(
    ".st-key-attention svg text, .lens-chip, .lens-label, [data-testid='stMain'] [data-testid='stCaptionContainer']")]
    .filter(e => e.textContent.trim() && e.getClientRects().length);
    return Math.min(...els.map(e => parseFloat(getComputedStyle(e).fontSize))); }"""


def shot(page, name: str, tmp_path) -> None:
    page.wait_for_timeout(600)  # fonts and the last layout pass
    out = ROOT / "assets" / name if UPDATE else tmp_path / name
    page.screenshot(path=str(out))
    assert out.stat().st_size > 10_000


def test_presenter_mode_text_is_large_and_the_sidebar_gone(server, tmp_path):
    with open_page(server, 1366, 768, BLACK_CAT + "&view=head&layer=3&head=1&present=1") as page:
        page.wait_for_function(ROW_SHOWN, arg=[4], timeout=60_000)
        assert not page.locator("[data-testid='stSidebar']").is_visible()
        smallest = page.evaluate(SMALLEST)
        assert smallest >= 18, smallest
        shot(page, "screenshot-present-1366.png", tmp_path)


@pytest.mark.parametrize(("size", "name"), [((1366, 768), "screenshot-1366.png"),
                                           ((1920, 1080), "screenshot-1920.png")])
def test_normal_screenshots(server, tmp_path, size, name):
    with open_page(server, *size, BLACK_CAT + "&view=mean&present=0") as page:
        page.wait_for_function(ROW_SHOWN, arg=[4], timeout=60_000)
        shot(page, name, tmp_path)
