"""Hostile input in a real browser (Playwright + Debian's Chromium, loopback only): typed HTML, script and
markdown come back as visible text, never as elements, and no script runs; escaped messages read normally."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import CHROMIUM, IDLE, browser_page
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]

HOSTILE = "<script>window.pwned=1</script> <b>bold</b> <img src=x onerror=window.pwned=2> **md** $x$ :red[cat]"


@pytest.fixture
def server(tiny_ckpt, app_server):
    return app_server(app_env(LENS_MODEL_DIRS=str(tiny_ckpt), LENS_DEFAULT_MODEL=tiny_ckpt.name))


def test_typed_markup_is_shown_as_text(server):
    from playwright.sync_api import expect

    with browser_page(server, 1400, 1200) as page:
        box = page.locator(".st-key-source input")
        box.wait_for(timeout=60_000)
        box.fill(HOSTILE)
        box.press("Enter")
        caption = page.get_by_text("Normalised to the corpus conventions", exact=False)
        expect(caption).to_be_visible(timeout=60_000)
        shown = caption.inner_text()
        for literal in ("<script>", "<b>bold</b>", "<img", "**md**", "$x$", ": red[cat]"):
            assert literal in shown, (literal, shown)
        main = page.locator("section.stMain, [data-testid='stMain']").first
        assert main.locator("b, strong, img, script, em").filter(has_text="bold").count() == 0
        assert main.locator("img[src='x'], script:has-text('pwned')").count() == 0
        assert "&#" not in main.inner_text()  # character references are decoded, not shown raw
        page.wait_for_timeout(500)
        assert page.evaluate("window.pwned") is None
        box.fill("   ")
        box.press("Enter")
        expect(page.get_by_text("The source text is empty: type a sentence.")).to_be_visible(timeout=30_000)


def test_a_paste_over_the_limit_is_cut_to_its_first_2000_characters_with_a_notice(server):
    """5,000 characters into the sentence box (the browser's own box used to drop the whole paste, and Enter then
    ran the old sentence or said it was empty): the first 2,000 are run, and the page says so."""
    from playwright.sync_api import expect

    with browser_page(server, 1366, 768) as page:
        box = page.locator(".st-key-source input")
        box.wait_for(timeout=60_000)
        box.fill(("the cat sat . " * 400)[:5000])
        box.press("Enter")
        expect(page.get_by_text("had 5,000 characters; the first 2,000 are used", exact=False)).to_be_visible(
            timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        kept = page.locator(".st-key-source textarea, .st-key-source input").first
        assert len(kept.input_value()) == 2000
