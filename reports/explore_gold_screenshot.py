"""Screenshot at 1366 x 768: a sentence opened on Explore from the Alignment page with its gold links drawn over the
cross-attention (the shipped grammar en-fr model, its test split's sentence --line, every row shown).

    .venv/bin/python -m reports.explore_gold_screenshot --out assets/explore-gold-1366.png [--line 1]

Starts its own server on a free port (reports/shots.py) and stops it after.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from harness.browser import ATTENTION, IDLE
from harness.server import app_env
from reports.shots import page_at, save

STEPPER = "[data-testid=lens-stepper]"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--line", type=int, default=1, help="the test split's sentence (1-based) to open")
    p.add_argument("--timeout", type=float, default=600, help="seconds any one wait may take")
    args = p.parse_args(argv)

    env = app_env(LENS_DEFAULT_MODEL="en-fr", LENS_WARMUP="0")
    with page_at(env, "Alignment?model=en-fr", timeout=args.timeout) as page:
        page.locator(".st-key-align_shipped").wait_for()
        page.locator(".st-key-align_shipped label").click()
        page.locator(".st-key-align_upload_sentence").wait_for()
        page.locator(IDLE).wait_for()
        if args.line != 1:
            page.locator(".st-key-align_upload_sentence").click()
            page.get_by_role("option", name=f"{args.line}: ", exact=False).first.click()
            page.locator(IDLE).wait_for()
        page.locator(".st-key-align_upload_explore button").click()
        page.locator(f"{ATTENTION} canvas").first.wait_for()
        page.locator(f"{STEPPER} .lens-gold").wait_for()
        page.locator(IDLE).wait_for()
        page.locator(f"{STEPPER} .lens-last").click()
        page.locator(f"{STEPPER} .lens-gold").scroll_into_view_if_needed()
        page.wait_for_timeout(800)
        save(page, Path(args.out))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
