"""Where a fresh browser's page load goes: Chromium's sampling profiler (CDP) from navigation to the first heatmap.

Opens the Explore page (or --path) of a running server in a new browser context (nothing cached), as
page_times.py does, with the JS profiler on; prints the main thread's busy time per 100 ms and per script
file, when each script arrived, and the bytes fetched (transfer sizes: compressed, if the server
compressed them). Median of --n loads for the totals.

    .venv/bin/python benchmarks/profile_page.py --n 3            # starts its own server on this tree
    .venv/bin/python benchmarks/profile_page.py --url http://127.0.0.1:8501 --path Alignment
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.page_times import SETTLED, TIMEOUT, start  # noqa: E402
from tests.fixtures.browser import CHROMIUM, LAUNCH_ARGS, ROW_SHOWN, free_port  # noqa: E402


def self_times(profile: dict) -> tuple[dict[str, float], list[tuple[float, str]]]:
    """ms of self time per script file, and (time since start in ms, file) of every sample."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    per_file: dict[str, float] = collections.Counter()
    samples = []
    t = profile["startTime"]
    for node_id, dt in zip(profile["samples"], profile["timeDeltas"]):
        t += dt
        frame = nodes[node_id]["callFrame"]
        name = frame["url"].rsplit("/", 1)[-1] or f"({frame['functionName'] or 'native'})"
        samples.append(((t - profile["startTime"]) / 1000, name))
    for (t0, name), (t1, _) in zip(samples, samples[1:]):
        per_file[name] += t1 - t0
    return per_file, samples


def one(browser, url: str, wait: str) -> dict:
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    cdp = ctx.new_cdp_session(page)
    cdp.send("Profiler.enable")
    cdp.send("Profiler.setSamplingInterval", {"interval": 1000})
    cdp.send("Profiler.start")
    t0 = time.perf_counter()
    page.goto(url)
    if wait == "row":
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=TIMEOUT)
    else:
        page.wait_for_function(SETTLED, arg=[1], timeout=TIMEOUT)
    took = time.perf_counter() - t0
    profile = cdp.send("Profiler.stop")["profile"]
    resources = page.evaluate("""() => performance.getEntriesByType('resource').map(e => [e.name.split('/').pop(),
        Math.round(e.startTime), Math.round(e.responseEnd), e.transferSize])""")
    nav = page.evaluate("() => { const n = performance.getEntriesByType('navigation')[0];"
                        " return [Math.round(n.responseEnd), Math.round(n.domContentLoadedEventEnd)]; }")
    ctx.close()
    per_file, samples = self_times(profile)
    idle = {"((idle))", "((program))", "((garbage collector))"}
    busy = collections.Counter()
    for (t, name), (t1, _) in zip(samples, samples[1:]):
        if name not in idle:
            busy[int(t // 100)] += t1 - t
    return {"took_s": round(took, 2), "per_file": per_file, "busy": busy, "resources": resources, "nav": nav}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=3)
    parser.add_argument("--url", help="a running server (default: start one on this tree)")
    parser.add_argument("--path", default="", help="page path, e.g. Alignment")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    proc = None
    url = args.url
    if url is None:
        port = free_port()
        proc = start(ROOT, port)
        url = f"http://127.0.0.1:{port}"
    wait = "row" if not args.path else "settled"
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            one(browser, f"{url}/{args.path}", wait)  # the server's first page (its caches), not counted
            runs = [one(browser, f"{url}/{args.path}", wait) for _ in range(args.n)]
            browser.close()
    finally:
        if proc is not None:
            proc.terminate()
            proc.wait(timeout=15)
    last = runs[-1]
    print("navigation responseEnd / DOMContentLoaded ms:", last["nav"])
    print("resources (name, start ms, end ms, bytes):")
    for r in last["resources"]:
        print("   ", r)
    print("main thread busy ms per 100 ms (last run):",
          " ".join(f"{k / 10:.1f}:{v:.0f}" for k, v in sorted(last["busy"].items())))
    files = collections.Counter()
    for r in runs:
        files.update(r["per_file"])
    print("self time per file, ms (mean of runs):")
    for name, ms in files.most_common(15):
        print(f"    {ms / len(runs):7.0f}  {name}")
    print(json.dumps({"took_s": [r["took_s"] for r in runs], "median_s": statistics.median(r["took_s"] for r in runs),
                      "bytes_fetched": sum(r[3] for r in last["resources"])}))


if __name__ == "__main__":
    main()
