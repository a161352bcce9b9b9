"""Screenshots at 1366 x 768 of the Alignment page reading a big file whole: the progress bar while it aligns
(sentences done, rate, time left) and the page once done (the caption saying how many sentences were read, the
worst-first table). Serves this checkout with the everyday en-fr model.

    .venv/bin/python -m reports.alignment_stream_screenshot --file /tmp/align_upload_5000.tsv --repeat 4 --out assets

The file uploaded: --file's lines repeated --repeat times (benchmarks/align_upload_app.py writes such a file).
Writes alignment-stream-progress-1366.png and alignment-stream-done-1366.png under --out.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

from benchmarks.harness import IDLE, ROOT, app_env, launch, served

MODEL = ROOT / "checkpoints" / "everyday-en-fr"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="a TSV with gold (source, target, gold)")
    ap.add_argument("--repeat", type=int, default=4, help="its lines repeated this many times")
    ap.add_argument("--out", default="assets")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for the page")
    args = ap.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    wait_ms = args.timeout * 1000
    text = Path(args.file).read_text(encoding="utf-8") * args.repeat
    env = app_env(LENS_MODEL_DIRS=str(MODEL), LENS_DEFAULT_MODEL=str(MODEL), LENS_WARMUP="0")
    with tempfile.TemporaryDirectory() as tmp, served(env, seconds=300) as (url, _), sync_playwright() as p:
        upload = Path(tmp) / f"tatoeba-en-fr-{text.count(chr(10))}.tsv"
        upload.write_text(text, encoding="utf-8")
        browser = launch(p)
        page = browser.new_page(viewport={"width": 1366, "height": 768})
        page.goto(f"{url}/Alignment", timeout=wait_ms)
        box = page.locator(".st-key-align_upload input[type=file]")
        box.wait_for(state="attached", timeout=wait_ms)
        page.locator(IDLE).wait_for(timeout=wait_ms)
        t0 = time.perf_counter()
        box.set_input_files(str(upload))
        bar = page.locator("[data-testid=stProgress]").first
        bar.wait_for(timeout=wait_ms)
        page.get_by_text("a second").first.wait_for(timeout=wait_ms)  # the rate is shown once a batch is done
        page.wait_for_timeout(4000)
        bar.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -200)")
        page.screenshot(path=str(out / "alignment-stream-progress-1366.png"))
        page.locator(".st-key-align_upload_worst").wait_for(timeout=wait_ms)
        page.locator(".st-key-align_breakdown_distance").wait_for(timeout=wait_ms)
        page.locator(IDLE).wait_for(timeout=wait_ms)
        done = time.perf_counter() - t0
        page.get_by_text("sentences aligned").first.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -120)")
        page.wait_for_timeout(1500)
        page.screenshot(path=str(out / "alignment-stream-done-1366.png"))
        browser.close()
    print(f"{upload.name}: table and breakdown shown after {done:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
