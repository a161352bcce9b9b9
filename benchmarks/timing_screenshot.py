"""Screenshots at 1366 x 768 from a running app: the Alignment page of the shipped speech model (spoken-grammar)
after ranking its heads on the first held-out test clips: the figures of the chosen head set, and the DTW view of
the worst clip (the head set's cross-attention with the warping path, over the spectrogram with the gold and the
model's word starts).

    .venv/bin/streamlit run app/streamlit_app.py --server.headless true --server.port 8720 &
    .venv/bin/python -m benchmarks.timing_screenshot --port 8720 --out assets
"""

from __future__ import annotations

import argparse
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from benchmarks.lessons_screenshots import settle, shoot
from harness.browser import launch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8720)
    ap.add_argument("--out", default="assets")
    ap.add_argument("--model", default="spoken-grammar")
    ap.add_argument("--clips", type=int, default=20, help="test clips ranked (the first half chooses the heads)")
    args = ap.parse_args()
    base = f"http://localhost:{args.port}"
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_context(viewport={"width": 1366, "height": 768}, device_scale_factor=1).new_page()
        page.goto(f"{base}/Alignment?" + urlencode({"model": args.model}))
        settle(page, "Which heads time the words?")
        box = page.locator(".st-key-timing_n input")
        box.fill(str(args.clips))
        box.press("Enter")
        settle(page, "Rank the heads")
        page.get_by_role("button", name="Rank the heads").click()
        settle(page, "Clips, worst first")
        shoot(page, "Which heads time the words?", f"{args.out}/timing-rank-1366.png")
        page.locator(".js-plotly-plot").first.wait_for(timeout=300_000)
        settle(page, "warping path")
        shoot(page, page.locator(".st-key-timing_clip"), f"{args.out}/timing-dtw-1366.png", above=70)
        browser.close()


if __name__ == "__main__":
    main()
