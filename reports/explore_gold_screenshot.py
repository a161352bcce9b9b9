"""Screenshot at 1366 x 768: a sentence opened on Explore from the Alignment page with its gold links drawn over the
cross-attention (the shipped grammar en-fr model, its test split's sentence --line, every row shown).

    .venv/bin/python -m reports.explore_gold_screenshot --out assets/explore-gold-1366.png [--line 1]

Starts its own server on a free port (tests/support/server.py) and stops it after.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tests.support.browser import ATTENTION, IDLE, launch
from tests.support.server import app_env, served

STEPPER = "[data-testid=lens-stepper]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--line", type=int, default=1, help="the test split's sentence (1-based) to open")
    p.add_argument("--timeout", type=float, default=600, help="seconds any one wait may take")
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    wait = args.timeout * 1000
    env = app_env(LENS_DEFAULT_MODEL="en-fr", LENS_WARMUP="0")
    with served(env, seconds=args.timeout) as (url, _), sync_playwright() as pw:
        browser = launch(pw)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768}, device_scale_factor=1)
            page.goto(f"{url}/Alignment?model=en-fr", timeout=wait)
            page.locator(".st-key-align_shipped").wait_for(timeout=wait)
            page.locator(IDLE).wait_for(timeout=wait)
            page.locator(".st-key-align_shipped label").click()
            page.locator(".st-key-align_upload_sentence").wait_for(timeout=wait)
            page.locator(IDLE).wait_for(timeout=wait)
            if args.line != 1:
                page.locator(".st-key-align_upload_sentence").click()
                page.get_by_role("option", name=f"{args.line}: ", exact=False).first.click()
                page.locator(IDLE).wait_for(timeout=wait)
            page.locator(".st-key-align_upload_explore button").click()
            page.locator(f"{ATTENTION} canvas").first.wait_for(timeout=wait)
            page.locator(f"{STEPPER} .lens-gold").wait_for(timeout=wait)
            page.locator(IDLE).wait_for(timeout=wait)
            page.locator(f"{STEPPER} .lens-last").click()
            page.locator(f"{STEPPER} .lens-gold").scroll_into_view_if_needed()
            page.wait_for_timeout(800)
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=args.out)
        finally:
            browser.close()
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
