"""First-time costs on a fresh server (issue 27), without and with the warm-up (app/warmup.py), side by side.

Each round starts one fresh server per setting (LENS_WARMUP=0: as before; LENS_WARMUP=1: the warm-up thread),
in turn, on the server's default model (everyday-en-fr), whose first example it opens. A visitor opens Explore
(the server's first page), reads it for --idle
seconds, then, timed from the click to what it waits for:
- export: "PNG (this view)" in "Export this run" -> the download starts (kaleido renders the picture)
- switch_off: the Head view's "Switch this head off" -> the chart of the original tokens' probabilities drawn
- leakage: the Leakage lab opened (same session) -> its first chart drawn
Prints one JSON line per run, then one with each measure's median per setting.

    .venv/bin/python -m benchmarks.first_costs --rounds 3 --idle 10
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

from benchmarks.harness import ATTENTION, IDLE, free_port, launch, serve

TIMEOUT_MS = 120_000


def one_run(warm: bool, idle: float, width: int = 1366, height: int = 768) -> dict:
    from playwright.sync_api import sync_playwright

    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")} | {"LENS_WARMUP": "1" if warm else "0"}
    proc = serve(env, port := free_port())
    url = f"http://127.0.0.1:{port}"
    out: dict = {"warmup": warm}
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
    args = parser.parse_args()
    runs: dict[bool, list[dict]] = {False: [], True: []}
    for r in range(args.rounds):
        for warm in (False, True):
            run = one_run(warm, args.idle)
            runs[warm].append(run)
            print(json.dumps({"round": r + 1, **run}), flush=True)
    keys = ("first_page_s", "export_s", "switch_off_s", "leakage_s")
    print(json.dumps({"rounds": args.rounds, "idle_s": args.idle, **{
        f"{k}_{'warm' if warm else 'cold'}": statistics.median(x[k] for x in runs[warm]) for k in keys
        for warm in (False, True)}}))


if __name__ == "__main__":
    main()
