"""What the screenshot scripts of reports/ share: a server of this checkout on a free port, one Chromium page at
1366 x 768 on one of its pages, and a file put into one of its upload boxes.

    with page_at(env, "Alignment?model=en-fr", timeout=600) as page:
        upload(page, ".st-key-align_upload", path, timeout=600)
        page.screenshot(path="assets/x.png")

The server (harness/server.py) and the browser are stopped when the block ends, also after an error.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from harness.browser import IDLE, launch
from harness.server import served

VIEWPORT = {"width": 1366, "height": 768}


@contextmanager
def page_at(env: Mapping[str, str], route: str, timeout: float) -> Iterator:
    """A Playwright page at 1366 x 768 opened on `route` of a fresh server of this checkout; waits `timeout`
    seconds at most for the page, and for the app's first run to end."""
    from playwright.sync_api import sync_playwright

    with served(env, seconds=timeout) as (url, _), sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport=VIEWPORT, device_scale_factor=1)
            page.set_default_timeout(timeout * 1000)
            page.goto(f"{url}/{route}", timeout=timeout * 1000)
            page.locator(IDLE).wait_for()
            yield page
        finally:
            browser.close()


def upload(page, box: str, path: Path) -> None:
    """Put the file at `path` into the upload box under the element `box` (a CSS selector), once the page is idle."""
    field = page.locator(f"{box} input[type=file]")
    field.wait_for(state="attached")
    page.locator(IDLE).wait_for()
    field.set_input_files(str(path))


def save(page, out: Path) -> None:
    """A screenshot of the window at `out`, its folder made if missing."""
    out.parent.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(out))
