"""Presenter mode in Chromium (shipped en-fr model): no sidebar, every text of the picture, the chips and the
captions at least 18 px; and the README's screenshots (LENS_UPDATE_SCREENSHOT=1 writes them to assets/)."""

from __future__ import annotations

import os

import pytest

from harness.browser import ATTENTION, IDLE, ROW_SHOWN
from harness.server import ROOT
from tests.browser import explore_browser as eb
from tests.browser.explore_browser import open_page

pytestmark = [pytest.mark.browser]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
BLACK_CAT = "?text=the+black+cat+sat+on+the+mat+.&mode=greedy&step=5&kind=cross"
# JS: the smallest font size (px) of the visible texts in the attention picture (the stepper's row and column
# labels and panel titles), the chips, the labels and the captions.
SMALLEST = """() => { const els = [...document.querySelectorAll(
    ".lens-picture .lens-q, .lens-picture .lens-k, .lens-picture .lens-ptitle, .lens-chip, .lens-label, "
    + ".lens-caption, [data-testid='stMain'] [data-testid='stCaptionContainer']")]
    .filter(e => e.textContent.trim() && e.getClientRects().length);
    return Math.min(...els.map(e => parseFloat(getComputedStyle(e).fontSize))); }"""


def shot(page, name: str, tmp_path) -> None:
    """Take the screenshot and check what it shows: the whole viewport, with the attention picture on screen and
    drawn in it (a heatmap's many colours where the chart stands, not a blank or half-loaded page)."""
    from PIL import Image

    page.wait_for_timeout(600)  # fonts and the last layout pass
    out = ROOT / "assets" / name if UPDATE else tmp_path / name
    page.screenshot(path=str(out))
    width, height = page.viewport_size["width"], page.viewport_size["height"]
    image = Image.open(out).convert("RGB")
    assert image.size == (width, height)
    box = page.locator(ATTENTION).bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= width and box["y"] >= 0
    shown = min(box["y"] + box["height"], height) - box["y"]  # how much of the chart is on screen
    assert shown >= min(box["height"], 200), box
    chart = image.crop((int(box["x"]), int(box["y"]), int(box["x"] + box["width"]), int(box["y"] + shown)))
    assert len(chart.getcolors(maxcolors=1 << 16) or range(1 << 16)) >= 50  # a colour scale, drawn
    assert "Last query: 4 " in page.locator(ATTENTION).get_attribute("aria-label")  # step 5: rows 0-4


def test_presenter_mode_text_is_large_and_the_sidebar_gone(shipped_server, tmp_path):
    with open_page(shipped_server, 1366, 768, BLACK_CAT + "&view=head&layer=3&head=1&present=1") as page:
        page.wait_for_function(ROW_SHOWN, arg=[4], timeout=60_000)
        assert not page.locator("[data-testid='stSidebar']").is_visible()
        smallest = page.evaluate(SMALLEST)
        assert smallest >= 18, smallest
        shot(page, "screenshot-present-1366.png", tmp_path)


@pytest.mark.parametrize(("size", "name"), [((1366, 768), "screenshot-1366.png"),
                                           ((1920, 1080), "screenshot-1920.png")])
def test_screenshots_show_the_drawn_picture_on_screen(shipped_server, tmp_path, size, name):
    with open_page(shipped_server, *size, BLACK_CAT + "&view=mean&present=0") as page:
        page.wait_for_function(ROW_SHOWN, arg=[4], timeout=60_000)
        shot(page, name, tmp_path)


def test_tour_screenshot_shows_the_causal_mask_stop_whole(shipped_server, tmp_path):
    """The README's picture of the tour: stop 4 (the causal mask, teacher forcing) at 1366 x 768, its text at the
    top of the screen and the whole map under it."""
    from PIL import Image

    with open_page(shipped_server, 1366, 768) as page:
        list(eb.tour_stops(page, 4))  # walked to stop 4
        page.wait_for_function(ROW_SHOWN, arg=[6], timeout=60_000)  # the whole reference: rows 0-6
        page.locator(IDLE).wait_for(timeout=60_000)
        page.wait_for_timeout(800)  # the scroll to the picture, fonts
        out = ROOT / "assets" / "screenshot-tour-1366.png" if UPDATE else tmp_path / "tour.png"
        page.screenshot(path=str(out))
        box, chart = page.locator(".st-key-tour").bounding_box(), page.locator(ATTENTION).bounding_box()
        assert box["y"] >= 0 and box["y"] + box["height"] <= chart["y"] and chart["y"] + chart["height"] <= 768
        image = Image.open(out).convert("RGB")
        crop = image.crop((int(chart["x"]), int(chart["y"]), int(chart["x"] + chart["width"]),
                           int(chart["y"] + chart["height"])))
        assert len(crop.getcolors(maxcolors=1 << 16) or range(1 << 16)) >= 50
