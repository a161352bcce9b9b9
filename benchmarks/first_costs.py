"""First-time costs on a fresh server, without and with the warm-up (app/warmup.py), side by side.

Each round starts one fresh server per setting, in turn: `cold` (LENS_WARMUP=0: no warm-up), `warm` (the warm-up
thread), and with --old-tree PATH also `old` (the warm-up of another checkout, e.g. a git worktree of the commit
before a change to it), on the server's default model (everyday-en-fr), whose first example it opens. A visitor
opens Explore (the server's first page), reads it for --idle seconds, then, timed from the click to what it waits
for:
- export: "PNG (this view)" in "Export this run" -> the download starts (kaleido renders the picture)
- switch_off: the Head view's "Switch this head off" -> the chart of the original tokens' probabilities drawn
- leakage: the Leakage lab opened (same session) -> its first chart drawn
The first page is timed twice from the goto: `first_page_s` until the attention chart's element is on the page,
`first_drawn_s` until the chart has drawn its picture and the page's script run has finished.
Prints one JSON line per run, then one with each measure's median per setting.

    .venv/bin/python -m benchmarks.first_costs --rounds 3 --idle 10 [--old-tree OLD_TREE] [--port 8621]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from harness.browser import ATTENTION, IDLE, launch
from harness.server import ROOT, app_env, free_port, serve

TIMEOUT_MS = 120_000
KEYS = ("first_page_s", "first_drawn_s", "export_s", "switch_off_s", "leakage_s")
# JS: the attention picture has drawn: the stepper's canvases (app/render/stepper), or on a tree from before it
# an ECharts chart with an SVG or a canvas in it and its aria label written.
DRAWN = """() => { const s = document.querySelector('.st-key-attention [data-testid=lens-stepper]');
    if (s) return !!s.dataset.step && !!s.querySelector('.lens-picture canvas');
    const el = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    return !!el && el.getAttribute('aria-busy') === 'false' && !!el.querySelector('svg, canvas'); }"""


def one_run(setting: str, idle: float, tree: Path = ROOT, port: int | None = None, width: int = 1366,
            height: int = 768) -> dict:
    """One fresh server of `tree` (its warm-up off for setting "cold"), one visitor; the seconds each wait took."""
    from playwright.sync_api import sync_playwright

    port = port or free_port()
    proc = serve(app_env(LENS_WARMUP="0" if setting == "cold" else "1"), port, tree)
    url = f"http://127.0.0.1:{port}"
    out: dict = {"setting": setting}
    try:
        with sync_playwright() as p:
            browser = launch(p)
            page = browser.new_page(viewport={"width": width, "height": height}, accept_downloads=True)
            began = time.perf_counter()
            # the default model (the one the warm-up warms) on its first example; a link with a `text` that is a
            # grammar preset opens the everyday model on its own first example instead (seen while running this)
            page.goto(url + "/?view=head&kind=cross&layer=1&head=1&step=3")
            page.locator(ATTENTION).wait_for(timeout=TIMEOUT_MS)
            out["first_page_s"] = round(time.perf_counter() - began, 2)
            page.wait_for_function(DRAWN, timeout=TIMEOUT_MS)
            page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
            out["first_drawn_s"] = round(time.perf_counter() - began, 2)
            page.wait_for_timeout(idle * 1000)

            page.get_by_text("Export this run").click()
            png = page.locator(".st-key-dl_png button")
            png.wait_for(timeout=TIMEOUT_MS)
            began = time.perf_counter()
            with page.expect_download(timeout=TIMEOUT_MS):
                png.click()
            out["export_s"] = round(time.perf_counter() - began, 2)

            page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
            began = time.perf_counter()
            page.get_by_role("button", name="Switch this head off").click()  # (its tooltip draws a hidden twin)
            page.locator(".st-key-ablation [data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=TIMEOUT_MS)
            out["switch_off_s"] = round(time.perf_counter() - began, 2)

            page.locator(IDLE).wait_for(timeout=TIMEOUT_MS)
            began = time.perf_counter()
            page.goto(url + "/Leakage_lab")
            page.locator("[data-testid=stPlotlyChart] .main-svg").first.wait_for(timeout=TIMEOUT_MS)
            out["leakage_s"] = round(time.perf_counter() - began, 2)
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--idle", type=float, default=10.0, help="seconds the visitor reads the first page")
    parser.add_argument("--old-tree", type=Path, help="also time the warm-up of this checkout (setting 'old')")
    parser.add_argument("--port", type=int, help="serve on this port (default: a free one)")
    args = parser.parse_args()
    settings = {"cold": ROOT, **({"old": args.old_tree.resolve()} if args.old_tree else {}), "warm": ROOT}
    runs: dict[str, list[dict]] = {name: [] for name in settings}
    for r in range(args.rounds):
        for name, tree in settings.items():
            run = one_run(name, args.idle, tree, args.port)
            runs[name].append(run)
            print(json.dumps({"round": r + 1, **run}), flush=True)
    print(json.dumps({"rounds": args.rounds, "idle_s": args.idle, **{
        f"{k}_{name}": statistics.median(x[k] for x in runs[name]) for k in KEYS for name in settings}}))


if __name__ == "__main__":
    main()
