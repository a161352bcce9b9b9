"""Screenshots at 1366 x 768 from a running app, on the shipped grammar en-fr: Explore's "why this token" views
(the logit lens panel, the gradient saliency row under the cross-attention picture with the heads' rank
agreement), the Compare page (a link: healthy en-fr against a broken model on one sentence), and the head roles
on the Heads page.

    ./run.sh app --server.port 8720 &        (or: .venv/bin/streamlit run app/streamlit_app.py --server.port 8720)
    .venv/bin/python -m benchmarks.why_screenshots --port 8720 --out assets

Each view is waited for by a text it only shows once computed, then the page is scrolled to it; a view that does
not appear within two minutes stops the script with Playwright's timeout (no picture of a half-drawn page).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from benchmarks.lessons_screenshots import shoot
from harness.browser import IDLE, launch

BLACK_CAT = "the black cat sat on the mat ."
BANK = "the dog sat near the bank of the river ."


def settle(page, text: str) -> None:
    """Wait for the text, then for the script run to finish and the last layout pass."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=120_000)
    page.locator(IDLE).wait_for(timeout=120_000)
    page.wait_for_timeout(1500)


def explore(page, base: str, out: Path, model: str) -> None:
    query = {"model": model, "text": BLACK_CAT, "mode": "greedy", "kind": "cross", "view": "mean", "step": "3",
             "present": "0"}
    page.goto(f"{base}/?" + urlencode(query))
    settle(page, "Logit lens")
    page.locator(".st-key-why_lens").get_by_text("Logit lens").click()
    settle(page, "Logit lens at step 3")
    shoot(page, page.locator(".st-key-attention"), out / "why-lens-1366.png")  # the picture, the lens under it
    page.locator(".st-key-why_lens").get_by_text("Logit lens").click()  # off again: the saliency alone
    page.locator(IDLE).wait_for(timeout=120_000)
    page.locator(".st-key-why_saliency").get_by_text("Gradient saliency").click()
    settle(page, "Integrated gradients:")
    # From the cross-attention picture down: the saliency row sits right under it.
    shoot(page, page.locator(".st-key-attention"), out / "why-saliency-1366.png")


def compare(page, base: str, out: Path, model: str, other: str) -> None:
    link = {"model": model, "a_text": BANK, "b_model": other, "b_text": BANK, "kind": "cross", "layer": "2",
            "head": "0", "step": "6"}
    page.goto(f"{base}/Compare?" + urlencode(link))
    # both sides drawn by the pair stepper (app/render/stepper/pair.js), the difference under them
    page.locator(".st-key-cmp_pair [data-testid=lens-pair-side] canvas").first.wait_for(state="attached",
                                                                                      timeout=120_000)
    settle(page, "matching tokens only")
    shoot(page, page.locator(".st-key-cmp_a_text"), out / "compare-1366.png")


def heads(page, base: str, out: Path, model: str) -> None:
    page.goto(f"{base}/Heads?" + urlencode({"model": model, "data": "test", "n": "20", "kind": "cross"}))
    settle(page, "Rank every head")
    page.get_by_text("Rank every head").click()
    settle(page, "Roles over")
    # The ranking's buttons above, the cross-attention roles table below.
    shoot(page, "what each head attends to", out / "head-roles-1366.png", above=420)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8720)
    ap.add_argument("--out", default="assets")
    ap.add_argument("--model", default="en-fr")
    ap.add_argument("--other", default="en-fr-no-scaling", help="side B of the Compare picture")
    ap.add_argument("--only", nargs="*", choices=("explore", "compare", "heads"), default=None)
    args = ap.parse_args()
    base, out = f"http://localhost:{args.port}", Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_context(viewport={"width": 1366, "height": 768}, device_scale_factor=1).new_page()
            if not args.only or "explore" in args.only:
                explore(page, base, out, args.model)
            if not args.only or "compare" in args.only:
                compare(page, base, out, args.model, args.other)
            if not args.only or "heads" in args.only:
                heads(page, base, out, args.model)
        finally:
            browser.close()


if __name__ == "__main__":
    main()
