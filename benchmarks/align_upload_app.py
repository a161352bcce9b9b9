"""The Alignment page on a 5,000-line file with gold, old against new in one run: a real server per side, Chromium
at 1366 x 768, the file chosen in the uploader -> the worst-first table drawn, -> the breakdown drawn and the page
idle; then another head chosen -> the page idle again (table and breakdown of that head); the server's peak
resident memory (VmHWM). `--memory`: the new code alone, in a fresh process per size, the file aligned as the page
aligns it (uploads.align_upload): peak resident memory (/usr/bin/time -v) and the bytes the report holds
(UploadReport.nbytes) at 500, 5,000 and the size cap's number of lines.

    .venv/bin/python -m benchmarks.align_upload_app --old COMMIT
    .venv/bin/python -m benchmarks.align_upload_app --memory
    .venv/bin/python -m benchmarks.align_upload_app --quick        # 200 lines, this checkout only

The file: every 32nd pair of assets/data/tatoeba/en-fr.tsv.gz (a spread of lengths, 6 words on average), the first
--lines of them, with gold links from the project's own aligner (model.aligner, ibm2, grow-diag-final-and, trained
on those pairs only: links for timing, not a reference). For the cap, those lines repeated up to the cap's bytes.
The model: everyday-en-fr. `old` is a `git archive` of another commit served as its own tree (its attention_lens/
holds app -> ../app and model -> ../model, so it imports its own code), with this checkout's checkpoints.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.browser import IDLE, launch
from harness.server import ROOT, app_env, served

TATOEBA = ROOT / "assets" / "data" / "tatoeba" / "en-fr.tsv.gz"
MODEL = ROOT / "checkpoints" / "everyday-en-fr"
TIMEOUT_MS = 600_000


def build(path: Path, lines: int) -> Path:
    """The benchmark's file (see the module docstring), made once."""
    if path.is_file() and sum(1 for _ in path.open(encoding="utf-8")) == lines:
        return path
    from attention_lens.model.aligner import align_pairs
    from attention_lens.model.analysis.alignment import format_pharaoh

    with gzip.open(TATOEBA, "rt", encoding="utf-8") as f:
        pairs = [tuple(line.rstrip("\n").split("\t")[:2]) for k, line in enumerate(f) if k % 32 == 0][:lines]
    links = align_pairs(pairs, backend="ibm2")
    path.write_text("".join(f"{s}\t{t}\t{format_pharaoh(found)}\n" for (s, t), found in zip(pairs, links)),
                    encoding="utf-8")
    return path


def old_tree(commit: str, where: Path) -> Path:
    """`commit`'s tree (without checkpoints/) in `where`, importing its own app and model, this checkout's models."""
    where.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", commit, "--", ".", ":(exclude)checkpoints"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive, check=True)
    for name in ("app", "model"):
        link = where / "attention_lens" / name
        if not link.exists():
            link.symlink_to(Path("..") / name)
    (where / "checkpoints").symlink_to(ROOT / "checkpoints")
    return where


def peak_mb(pid: int) -> float:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024


def head_switch(page) -> float | None:
    """Seconds from another head chosen in the Head box to the breakdown titled with it and the page idle (None
    when the box's list did not open)."""
    box = page.locator(".st-key-align_upload_head input[role=combobox]")
    shown = box.input_value()
    options = page.locator("[role=option]")
    for _ in range(3):
        box.click()
        try:
            options.first.wait_for(timeout=20_000)
            break
        except Exception:  # noqa: BLE001 -- a click a rerun swallowed: try again
            page.keyboard.press("Escape")
    else:
        return None
    other = next(k for k in range(options.count()) if options.nth(k).inner_text().strip() not in shown)
    name = options.nth(other).inner_text().strip()  # e.g. L2H3: the breakdown's title names it once redrawn
    t1 = time.perf_counter()
    options.nth(other).click()
    page.locator("[data-testid=stMarkdown]", has_text="Where the errors are").filter(
        has_text=f"-{name}").wait_for(timeout=TIMEOUT_MS)
    page.locator(".st-key-align_breakdown_distance").wait_for(timeout=TIMEOUT_MS)
    page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
    return time.perf_counter() - t1


def in_browser(tree: Path, path: Path) -> dict:
    """Seconds from the file chosen in the uploader to (a) the worst-first table drawn, (b) the breakdown drawn and
    the page idle; (c) from another head chosen to the page idle again; the server's peak memory. A fresh server:
    the first upload, nothing cached; the model loaded before the upload (the page opened first)."""
    from playwright.sync_api import sync_playwright

    env = app_env(LENS_MODEL_DIRS=str(MODEL), LENS_DEFAULT_MODEL=str(MODEL), LENS_WARMUP="0")
    with served(env, tree=tree, seconds=300) as (url, proc), sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(f"{url}/Alignment", timeout=TIMEOUT_MS)
            box = page.locator(".st-key-align_upload input[type=file]")
            box.wait_for(state="attached", timeout=TIMEOUT_MS)
            page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
            before = peak_mb(proc.pid)
            t0 = time.perf_counter()
            box.set_input_files(str(path))
            page.locator(".st-key-align_upload_worst").wait_for(timeout=TIMEOUT_MS)
            table = time.perf_counter() - t0
            page.locator(".st-key-align_breakdown_distance").wait_for(timeout=TIMEOUT_MS)
            page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
            done = time.perf_counter() - t0
            print(f"table shown {table:.1f} s, breakdown shown and idle {done:.1f} s", flush=True)
            switch = head_switch(page)
            peak = peak_mb(proc.pid)
        finally:
            browser.close()
    return {"table_shown_s": round(table, 1), "breakdown_shown_idle_s": round(done, 1),
            "head_switch_idle_s": None if switch is None else round(switch, 2),
            "server_peak_mb_before_upload": round(before), "server_peak_mb": round(peak)}


MEMORY_SCRIPT = """
import json, sys, time
from attention_lens.model.analysis.alignment import align_upload
from attention_lens.model.engine.loader import load_engine
data = open(sys.argv[1], 'rb').read()
engine = load_engine(sys.argv[2])
t = time.perf_counter()
report = align_upload(engine, data)
m = report.best_head()
report.counts(m), report.breakdown(m)
print(json.dumps({"sentences": report.n, "aligned": report.n_aligned, "report_bytes": report.nbytes(),
                  "file_bytes": len(data), "seconds": round(time.perf_counter() - t, 1)}))
"""


def memory(sizes: list[int], path: Path, cap_bytes: int) -> list[dict]:
    """Peak resident memory of a fresh process aligning files of `sizes` lines (the base file repeated; 0: as many
    lines as fit in cap_bytes), and the bytes its report holds."""
    base = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out = []
    with tempfile.TemporaryDirectory(prefix="align_upload_mem_") as tmp:
        for n in sizes:
            f = Path(tmp) / f"lines{n}.tsv"
            with f.open("w", encoding="utf-8") as w:
                written = k = 0
                while (n and k < n) or (not n and written + len(base[k % len(base)].encode()) <= cap_bytes):
                    line = base[k % len(base)]
                    w.write(line)
                    written += len(line.encode())
                    k += 1
            proc = subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", sys.executable, "-c", MEMORY_SCRIPT, str(f),
                                   str(MODEL)], cwd=ROOT, capture_output=True, text=True)
            if proc.returncode:
                raise SystemExit(proc.stderr[-2000:])
            wall, user, system, rss = proc.stderr.strip().splitlines()[-1].split()
            row = {"lines": k, **json.loads(proc.stdout.strip().splitlines()[-1]), "peak_mb": round(int(rss) / 1024),
                   "cpu_s": round(float(user) + float(system), 1), "wall_s": float(wall)}
            print(json.dumps(row), flush=True)
            out.append(row)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lines", type=int, default=5000)
    p.add_argument("--file", default=str(Path(tempfile.gettempdir()) / "align_upload_5000.tsv"))
    p.add_argument("--old", metavar="REV", help="a git revision to compare with (e.g. the commit "
                    "before the change); without it, this tree alone")
    p.add_argument("--sides", nargs="+", default=["old", "new"], choices=["old", "new"])
    p.add_argument("--memory", action="store_true", help="peak memory of the new code at 500, 5,000 and the cap's "
                                                         "lines (no browser)")
    p.add_argument("--quick", action="store_true", help="200 lines, this checkout only (a check that it runs)")
    args = p.parse_args(argv)
    if args.quick:
        args.lines, args.sides, args.file = 200, ["new"], str(Path(tempfile.gettempdir()) / "align_upload_200.tsv")
    args.sides = [s for s in args.sides if s == "new" or args.old]
    path = build(Path(args.file), args.lines)
    result: dict = {"lines": args.lines, "loadavg": os.getloadavg()}
    if args.memory:
        from attention_lens.app.services import UPLOAD_MAX_BYTES

        result["memory"] = memory([500, 5000, 0], path, UPLOAD_MAX_BYTES)
    else:
        with tempfile.TemporaryDirectory(prefix="align_upload_app_") as tmp:
            trees = {"new": ROOT}
            if "old" in args.sides:
                trees["old"] = old_tree(args.old, Path(tmp) / "old")
            for side in args.sides:
                result[side] = in_browser(trees[side], path)
                print(side, json.dumps(result[side]), flush=True)
    result["loadavg_after"] = os.getloadavg()
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
