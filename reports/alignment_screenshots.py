"""Screenshots at 1366 x 768 of the Alignment page's file section: the sentences worst first, a sentence opened
from that table (a click on its first row) with its links and word matrix with gold, and the error breakdown.

    .venv/bin/streamlit run app/streamlit_app.py --server.headless true --server.port 8731 &
    .venv/bin/python -m reports.alignment_screenshots --port 8731 --data PATH/TO/hansards-en-fr.tsv \
        --lines 150 --model everyday-en-fr --out assets

Writes alignment-worst-1366.png, alignment-sentence-1366.png, alignment-breakdown-1366.png under --out, and
prints how long the page took from the upload to the table and to the breakdown (seconds).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from harness.browser import launch


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--data", required=True, help="a gold TSV (source, target, gold)")
    ap.add_argument("--lines", type=int, default=150, help="its first N lines are uploaded")
    ap.add_argument("--model", default="everyday-en-fr")
    ap.add_argument("--out", default="assets")
    ap.add_argument("--timeout", type=float, default=600, help="seconds to wait for the page")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    lines = Path(args.data).read_text(encoding="utf-8").splitlines()[:args.lines]
    wait_ms = args.timeout * 1000
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        upload = Path(tmp) / f"{Path(args.data).stem}-{len(lines)}.tsv"
        upload.write_text("\n".join(lines) + "\n", encoding="utf-8")
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(f"http://127.0.0.1:{args.port}/Alignment?model={args.model}", wait_until="networkidle")
        page.get_by_text("Your test file").first.wait_for(timeout=wait_ms)
        t0 = time.perf_counter()
        page.locator("input[type=file]").first.set_input_files(str(upload))
        worst = page.get_by_text("Sentences, worst first").first
        try:
            worst.wait_for(timeout=wait_ms)
        except Exception:
            page.screenshot(path=str(out / "alignment-failed-1366.png"))
            raise
        t_table = time.perf_counter() - t0
        page.locator(".st-key-align_breakdown_distance svg").first.wait_for(state="attached", timeout=wait_ms)
        t_breakdown = time.perf_counter() - t0
        page.wait_for_timeout(1500)
        worst.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -60)")
        page.wait_for_timeout(800)
        page.screenshot(path=str(out / "alignment-worst-1366.png"))
        grid = page.locator(".st-key-align_upload_worst [data-testid='stDataFrameResizable']").first
        box = grid.bounding_box()
        page.mouse.click(box["x"] + 18, box["y"] + 35 + 17)  # the first data row's selection cell
        page.wait_for_timeout(3000)
        page.get_by_text("word matrix").first.wait_for(timeout=wait_ms)
        matrix = page.locator(".st-key-align_upload_links").first
        if matrix.count():
            matrix.scroll_into_view_if_needed()
        else:
            page.get_by_text("Sentence of your file").first.scroll_into_view_if_needed()
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "alignment-sentence-1366.png"))
        page.get_by_text("Where the errors are").first.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -20)")
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "alignment-breakdown-1366.png"))
        browser.close()
    print(f"{len(lines)} lines: table after {t_table:.1f} s, breakdown after {t_breakdown:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
