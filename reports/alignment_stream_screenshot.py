"""Screenshots at 1366 x 768 of the Alignment page reading a big file whole: the progress bar while it aligns
(sentences done, rate, time left) and the page once done (the caption saying how many sentences were read, the
worst-first table). Serves this checkout with the everyday en-fr model.

    .venv/bin/python -m reports.alignment_stream_screenshot --file align_upload_5000.tsv --repeat 4 --out assets

The file uploaded: --file's lines repeated --repeat times (benchmarks/align_upload_app.py writes such a file).
Writes alignment-stream-progress-1366.png and alignment-stream-done-1366.png under --out.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

from harness.browser import IDLE
from harness.server import ROOT, app_env
from reports.shots import page_at, save, upload

MODEL = ROOT / "checkpoints" / "everyday-en-fr"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", required=True, help="a TSV with gold (source, target, gold)")
    ap.add_argument("--repeat", type=int, default=4, help="its lines repeated this many times")
    ap.add_argument("--out", default="assets")
    ap.add_argument("--timeout", type=float, default=900, help="seconds to wait for the page")
    args = ap.parse_args(argv)
    out = Path(args.out)
    text = Path(args.file).read_text(encoding="utf-8") * args.repeat
    env = app_env(LENS_MODEL_DIRS=str(MODEL), LENS_DEFAULT_MODEL=str(MODEL), LENS_WARMUP="0")
    with tempfile.TemporaryDirectory() as tmp, page_at(env, "Alignment", args.timeout) as page:
        data = Path(tmp) / f"tatoeba-en-fr-{text.count(chr(10))}.tsv"
        data.write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        upload(page, ".st-key-align_upload", data)
        bar = page.locator("[data-testid=stProgress]").first
        bar.wait_for()
        page.get_by_text("a second").first.wait_for()  # the rate is shown once a batch is done
        page.wait_for_timeout(4000)
        bar.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -200)")
        save(page, out / "alignment-stream-progress-1366.png")
        page.locator(".st-key-align_upload_worst").wait_for()
        page.locator(".st-key-align_breakdown_distance").wait_for()
        page.locator(IDLE).wait_for()
        done = time.perf_counter() - t0
        page.get_by_text("sentences aligned").first.scroll_into_view_if_needed()
        page.evaluate("window.scrollBy(0, -120)")
        page.wait_for_timeout(1500)
        save(page, out / "alignment-stream-done-1366.png")
    print(f"{data.name}: table and breakdown shown after {done:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
