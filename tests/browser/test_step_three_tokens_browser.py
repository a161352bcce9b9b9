"""Drive the served app with Playwright and Debian's Chromium: step three tokens, check the prefix and the
heatmaps update, save a screenshot (to the test's tmp folder). The README's screenshots are written by
tests/browser/test_explore_screenshots.py and the other LENS_UPDATE_SCREENSHOT=1 paths, not by this test."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import ATTENTION, CHIPS, CHROMIUM, ROW_SHOWN, launch
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (installed by .ci/run)"),
]


@pytest.fixture
def server(tiny_ckpt, app_server):
    return app_server(app_env(tiny_ckpt, LENS_WARMUP="0"))


def test_step_three_tokens_and_screenshot(server, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1450}, device_scale_factor=1)
            page.goto(server)
            nxt = page.locator("[data-testid=lens-stepper] .lens-next")  # the stepper's Next (steps in the page)
            nxt.wait_for(timeout=60_000)
            page.wait_for_function(ROW_SHOWN, arg=[0], timeout=60_000)
            expect(page.locator(CHIPS)).to_have_count(1)
            first = page.locator(CHIPS).first.inner_text()
            for step in (2, 3, 4):
                nxt.click()
                expect(page.get_by_text(f"Step {step} of", exact=False)).to_be_visible(timeout=30_000)
                expect(page.locator(CHIPS)).to_have_count(step, timeout=30_000)
                page.wait_for_function(ROW_SHOWN, arg=[step - 1], timeout=30_000)
            chips = page.locator(CHIPS).all_inner_texts()
            assert chips[0] == first and len(chips) == 4
            said = page.locator(ATTENTION).get_attribute("aria-label")  # the picture's own description
            assert " 4 × " in said and "Last query: 3 " in said, said  # rows 0-3 drawn, no fifth
            out = tmp_path / "screenshot.png"
            page.screenshot(path=str(out))
            assert out.stat().st_size > 10_000
        finally:
            browser.close()
