"""Explore defects that show only in a real browser (Playwright + Debian's Chromium, loopback only), on the
shipped en-fr model: a step click after a run that stopped on an error, and labels cut at 1366 px."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.browser import ATTENTION, IDLE, SOURCE_SHOWN
from tests.browser.explore_browser import CUT_LABELS, NEXT, open_page

pytestmark = [pytest.mark.browser]


def test_step_after_an_error_run_draws_no_traceback(shipped_server):
    with open_page(shipped_server, 1366, 768) as page:
        box = page.locator(".st-key-source input")
        box.fill("   ")
        box.press("Enter")
        expect(page.get_by_text("The source text is empty", exact=False)).to_be_visible(timeout=30_000)
        box.fill("the cat sat .")
        box.press("Enter")
        page.wait_for_function(SOURCE_SHOWN, arg=["thecatsat."], timeout=60_000)  # the new run is on the page
        page.locator(IDLE).wait_for(timeout=60_000)
        nxt = page.locator(NEXT)
        expect(nxt).to_be_enabled(timeout=30_000)
        nxt.click()
        expect(page.get_by_text("Step 2 of", exact=False)).to_be_visible(timeout=30_000)
        page.wait_for_timeout(500)
        assert page.get_by_text("unknown attention kind", exact=False).count() == 0
        assert page.locator("[data-testid='stException']").count() == 0
        expect(page.locator(ATTENTION)).to_be_visible()


def test_no_control_label_is_cut_at_1366(shipped_server):
    with open_page(shipped_server, 1366, 768) as page:
        cut = page.evaluate(CUT_LABELS)
        assert cut == [], cut
