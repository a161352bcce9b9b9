"""Screenshots at 1366 x 768 of the Heads page ranking a big uploaded file: while it runs (the progress bar: pairs
done, rate, time left) and when it is done (the ranking over every pair, the roles read against the file's gold).

    .venv/bin/python -m reports.heads_upload_screenshot --out assets/heads-upload-1366.png [--lines 6000]

The file: the shipped grammar en-fr test split (with its gold links) repeated to --lines lines. Writes --out (the
finished page) and, beside it, NAME-progress.png (the bar while it runs). Starts its own server on a free port
(reports/shots.py) and stops it after.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from harness.browser import IDLE
from harness.server import app_env
from reports.shots import page_at, save, upload

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "assets" / "data" / "en-fr.test.tsv"
PROGRESS = "[data-testid=stProgress]"


def big_file(lines: int, folder: Path) -> Path:
    rows = [r for r in DATA.read_text(encoding="utf-8").splitlines() if r.strip()]
    path = folder / f"en-fr-{lines}.tsv"
    path.write_text("".join(rows[i % len(rows)] + "\n" for i in range(lines)), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--lines", type=int, default=6000)
    p.add_argument("--timeout", type=float, default=1200, help="seconds any one wait may take")
    args = p.parse_args(argv)
    out = Path(args.out)
    env = app_env(LENS_DEFAULT_MODEL="en-fr", LENS_WARMUP="0")
    with tempfile.TemporaryDirectory() as tmp, page_at(env, "Heads?model=en-fr&data=file", args.timeout) as page:
        upload(page, ".st-key-heads_file", big_file(args.lines, Path(tmp)))
        page.locator(".st-key-heads_rank button").wait_for()
        page.locator(IDLE).wait_for()
        page.locator(".st-key-heads_rank button").click()
        page.locator(PROGRESS, has_text="pairs/s").wait_for()
        save(page, out.with_name(out.stem + "-progress.png"))
        page.locator(".st-key-open_cross_1_1 button").wait_for()
        page.locator(IDLE).wait_for()
        page.wait_for_timeout(800)
        save(page, out)
    print(f"wrote {out} and {out.with_name(out.stem + '-progress.png')}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
