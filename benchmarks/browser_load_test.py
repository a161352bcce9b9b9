"""What one real page feels like under load: N concurrent Chromium pages on one served app, each stepping.

The server's capacity is measured by benchmarks/load_test.py (protocol level, no browsers); this smaller
check has the browsers on the same cores as the server, so its latencies include them.

Starts `streamlit run app/streamlit_app.py` on 127.0.0.1 (a free port), opens N Chromium pages (one browser
context each, so N independent Streamlit sessions) and has every page click Next `--steps` times, all pages at
once. A step's latency is the time from the click to the new row being drawn in the attention chart. Reports
the p50 / p95 / max step latency, any error shown on a page (a Streamlit exception or an error box), and the
server's resident memory (VmRSS from /proc) once every page has loaded and after all the stepping.

    .venv/bin/python benchmarks/browser_load_test.py                # 3 sessions x 20 steps, tiny random model
    .venv/bin/python benchmarks/browser_load_test.py --sessions 3 --model checkpoints/en-fr --text "the black dog that \
        the small cat chased sat on the mat near the river and the man found the bank ."

A measurement: it prints one summary line per phase and one JSON line at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fixtures.browser import CHROMIUM, LAUNCH_ARGS, ROW_SHOWN, SOURCE_SHOWN, free_port, serve  # noqa: E402

STEP_TIMEOUT_MS = 120_000


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(1, int(-(-q * len(ordered) // 100)))
    return ordered[rank - 1]


def model_env(model: str | None) -> tuple[dict[str, str], str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"  # the server shares two cores with the browser
    if model:
        path = Path(model).resolve()
    else:
        from tests.fixtures.checkpoints import build_tiny_checkpoint

        path = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "load-tiny")
    env.update(LENS_MODEL_DIRS=str(path), LENS_DEFAULT_MODEL=str(path))
    return env, path.name


async def one_session(browser, url: str, steps: int, ready: asyncio.Event, start: asyncio.Event,
                      text: str | None = None) -> dict:
    """Load the page (type `text` if given), set `ready`, wait for `start`, click Next `steps` times timing each
    step."""
    context = await browser.new_context(viewport={"width": 1280, "height": 1000})
    page = await context.new_page()
    latencies: list[float] = []
    try:
        await page.goto(url, timeout=STEP_TIMEOUT_MS)
        nxt = page.locator(".st-key-next button")
        await nxt.wait_for(timeout=STEP_TIMEOUT_MS)
        await page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
        if text:
            box = page.locator(".st-key-source input")
            await box.fill(text)
            await box.press("Enter")
            await page.wait_for_function(SOURCE_SHOWN, arg=[text.replace(" ", "")], timeout=STEP_TIMEOUT_MS)
            await page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
        ready.set()
        await start.wait()
        for step in range(1, steps + 1):
            if await nxt.is_disabled():
                break  # the run ended before `steps` tokens
            t0 = time.perf_counter()
            await nxt.click(timeout=STEP_TIMEOUT_MS)
            await page.wait_for_function(ROW_SHOWN, arg=[step], timeout=STEP_TIMEOUT_MS, polling=50)
            latencies.append(time.perf_counter() - t0)
        errors = await page.locator("[data-testid='stException'], [data-testid='stAlertContentError']").count()
        text = await page.locator(".st-key-prefix").inner_text()
        return {"latencies": latencies, "errors": errors, "prefix_chips": text.count("\n") + 1}
    except Exception as exc:  # a timeout or a closed page is a failed session, reported, not a crashed run
        return {"latencies": latencies, "errors": 1, "failure": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        ready.set()
        await context.close()


async def drive(url: str, sessions: int, steps: int, server_pid: int, text: str | None) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            start = asyncio.Event()
            ready = [asyncio.Event() for _ in range(sessions)]
            tasks = [asyncio.create_task(one_session(browser, url, steps, r, start, text)) for r in ready]
            # Every page has loaded and drawn step 1 (or failed) before the stepping starts.
            await asyncio.gather(*(r.wait() for r in ready))
            rss_loaded = rss_mb(server_pid)
            t0 = time.perf_counter()
            start.set()
            results = await asyncio.gather(*tasks)
            elapsed = time.perf_counter() - t0
        finally:
            await browser.close()
    return {"results": results, "rss_loaded_mb": rss_loaded, "stepping_seconds": elapsed}


def run(sessions: int = 3, steps: int = 20, model: str | None = None, text: str | None = None) -> dict:
    env, name = model_env(model)
    port = free_port()
    proc = serve(env, port)
    try:
        url = f"http://127.0.0.1:{port}"
        rss_start = rss_mb(proc.pid)
        out = asyncio.run(drive(url, sessions, steps, proc.pid, text))
        rss_end = rss_mb(proc.pid)
        alive = proc.poll() is None
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
    latencies = [x for r in out["results"] for x in r["latencies"]]
    failures = [r["failure"] for r in out["results"] if "failure" in r]
    return {
        "model": name, "sessions": sessions, "steps_per_session": steps, "steps_done": len(latencies),
        "errors": sum(r["errors"] for r in out["results"]), "failures": failures, "server_alive": alive,
        "p50_step_s": round(statistics.median(latencies), 3) if latencies else None,
        "p95_step_s": round(percentile(latencies, 95), 3) if latencies else None,
        "max_step_s": round(max(latencies), 3) if latencies else None,
        "stepping_seconds": round(out["stepping_seconds"], 1),
        "rss_start_mb": round(rss_start, 1), "rss_loaded_mb": round(out["rss_loaded_mb"], 1),
        "rss_end_mb": round(rss_end, 1), "rss_growth_mb": round(rss_end - out["rss_loaded_mb"], 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--model", help="a model folder (default: a tiny random checkpoint built here)")
    parser.add_argument("--text", help="a normalised sentence every page types (default: the page's first example)")
    args = parser.parse_args()
    report = run(args.sessions, args.steps, args.model, args.text)
    print(f"{report['sessions']} sessions x {report['steps_per_session']} steps on {report['model']}: "
          f"{report['steps_done']} steps, {report['errors']} errors; step latency p50 {report['p50_step_s']} s, "
          f"p95 {report['p95_step_s']} s, max {report['max_step_s']} s; server RSS {report['rss_start_mb']} MB "
          f"at start, {report['rss_loaded_mb']} MB with every page loaded, {report['rss_end_mb']} MB after "
          f"stepping (+{report['rss_growth_mb']} MB)", file=sys.stderr)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
