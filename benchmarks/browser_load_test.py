"""Real Chromium pages stepping Explore: click to redraw, and the Next click a browser really sends.

Three uses:

- `BrowserPage`: one Chromium page (its own browser context, so its own Streamlit session) on Explore, whose
  `click_next()` times a click on the stepper's Next from the click until the stepper has drawn the new row
  (`harness.ROW_SHOWN`: the stepper's step and its canvases). benchmarks/load_test.py runs
  such pages beside its protocol-level sessions: that is the "in a real browser" figure.
- `run`: N concurrent pages on one served app, each clicking Next `--steps` times, all pages at once (the
  browsers share the server's cores, so this is what a page feels like on a small machine, not the server's
  capacity: that is load_test.py's).
- `--capture-click PATH`: one click on the hidden server-side Next button (the step bar that scripted clients
  use; the stepper's own Next sends nothing) of a fresh Chromium page on the shipped default model, as the
  BackMsg the page sent (Playwright's websocket `framesent` event), written as JSON:
  tests/fixtures/next_click.json, against which tests/test_load.py checks the load test's click message.

    .venv/bin/python -m benchmarks.browser_load_test                # 3 pages x 20 steps, tiny random model
    .venv/bin/python -m benchmarks.browser_load_test --sessions 3 --model checkpoints/en-fr
    .venv/bin/python -m benchmarks.browser_load_test --capture-click tests/fixtures/next_click.json

`run` prints one summary line (stderr) and one JSON line.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from harness.browser import CHIPS, IDLE, ROW_SHOWN, SOURCE_SHOWN, launch
from harness.measure import STEPPER_FIRST, STEPPER_NEXT, percentile, rss_mb
from harness.server import ROOT, app_env, free_port, serve, stop

STEP_TIMEOUT_MS = 120_000
ERRORS = "[data-testid='stException'], [data-testid='stAlertContentError']"


def model_env(model: str | None) -> tuple[dict[str, str], str]:
    """The server's environment for `model` (default: a tiny random checkpoint built here), and its name."""
    if model:
        path = Path(model).resolve()
    else:
        from harness.models.tiny import build_tiny_checkpoint

        path = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "load-tiny")
    env = app_env(path)
    env["OMP_NUM_THREADS"] = env["MKL_NUM_THREADS"] = "1"  # the server shares two cores with the browser
    return env, path.name


class BrowserPage:
    """One Chromium page on Explore, stepping with the stepper's Next (and First step, untimed, at the run's
    end)."""

    def __init__(self, page, context):
        from benchmarks.burst_bench import FrameLog

        self.page, self.context = page, context
        self.next = page.locator(STEPPER_NEXT)
        self.reset = page.locator(STEPPER_FIRST)
        self.row = 0  # the stepper's last drawn row (step - 1)
        self.log = FrameLog(page)  # the websocket frames it sends and receives (from its first page load on)

    @classmethod
    async def open(cls, browser, url: str, text: str | None = None, viewport=(1366, 768)) -> BrowserPage:
        """A new page at step 1 of `url`'s Explore (of `text` typed into the source box, when given)."""
        context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
        page = await context.new_page()
        self = cls(page, context)
        try:
            await page.goto(url, timeout=STEP_TIMEOUT_MS)
            await self.next.wait_for(timeout=STEP_TIMEOUT_MS)
            await page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
            if text:
                box = page.locator(".st-key-source input")
                await box.fill(text)
                await box.press("Enter")
                await page.wait_for_function(SOURCE_SHOWN, arg=[text.replace(" ", "")], timeout=STEP_TIMEOUT_MS)
                await page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
        except BaseException:
            await context.close()
            raise
        return self

    async def ready(self) -> None:
        """At a step with Next enabled: at the run's last step, click First step (untimed) and wait for row 0."""
        if await self.next.is_disabled():
            await self.reset.click(timeout=STEP_TIMEOUT_MS)
            await self.page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
            self.row = 0

    async def click_next(self) -> float:
        """Click Next; seconds from the click until the stepper has drawn the next row (call `ready` first)."""
        t0 = time.perf_counter()
        await self.next.click(timeout=STEP_TIMEOUT_MS)
        await self.page.wait_for_function(ROW_SHOWN, arg=[self.row + 1], timeout=STEP_TIMEOUT_MS)
        self.row += 1
        return time.perf_counter() - t0

    async def captured_step(self) -> list[dict]:
        """One untimed step (First step before it at the run's end) with what the page sent for it: the BackMsgs
        from the click until the new row is drawn, the page idle and SETTLE_MS more (burst_bench.describe)."""
        from benchmarks.burst_bench import SETTLE_MS, describe

        await self.ready()
        await self.page.wait_for_timeout(SETTLE_MS)
        mark = len(self.log.sent)
        await self.click_next()
        await self.page.wait_for_selector(IDLE, timeout=STEP_TIMEOUT_MS)
        await self.page.wait_for_timeout(SETTLE_MS)
        return [describe(f) for f in self.log.sent[mark:]]

    async def errors(self) -> int:
        """Streamlit exceptions and error boxes on the page now."""
        return await self.page.locator(ERRORS).count()

    async def close(self) -> None:
        await self.context.close()


async def one_session(browser, url: str, steps: int, ready: asyncio.Event, start: asyncio.Event,
                      text: str | None = None) -> dict:
    """Open a page (type `text` if given), set `ready`, wait for `start`, click Next `steps` times."""
    latencies: list[float] = []
    bp = None
    try:
        bp = await BrowserPage.open(browser, url, text, viewport=(1280, 1000))
        ready.set()
        await start.wait()
        for _ in range(steps):
            if await bp.next.is_disabled():
                break  # the run ended before `steps` tokens
            latencies.append(await bp.click_next())
        chips = await bp.page.locator(CHIPS).count()
        return {"latencies": latencies, "errors": await bp.errors(), "prefix_chips": chips}
    except Exception as exc:  # a timeout or a closed page is a failed session, reported, not a crashed run
        return {"latencies": latencies, "errors": 1, "failure": f"{type(exc).__name__}: {exc}"[:300]}
    finally:
        ready.set()
        if bp is not None:
            await bp.close()


async def drive(url: str, sessions: int, steps: int, server_pid: int, text: str | None) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await launch(p)
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
    proc = serve(env, port := free_port())
    try:
        url = f"http://127.0.0.1:{port}"
        rss_start = rss_mb(proc.pid)
        out = asyncio.run(drive(url, sessions, steps, proc.pid, text))
        rss_end = rss_mb(proc.pid)
        alive = proc.poll() is None
    finally:
        stop(proc)
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


# ---- a real click, captured ------------------------------------------------------------------------------------
async def capture(url: str) -> dict:
    """The BackMsg a fresh Chromium page sends for its first click on the server-side Next button on `url` (the
    hidden step bar: a click event dispatched on it, as Chromium sends a user's click), and what the click got
    back."""
    from google.protobuf import json_format
    from playwright.async_api import async_playwright
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    frames: list[tuple[str, bytes]] = []

    def listen(ws) -> None:
        ws.on("framesent", lambda d: frames.append(("sent", d)))
        ws.on("framereceived", lambda d: frames.append(("got", d)))

    async with async_playwright() as p:
        browser = await launch(p)
        try:
            context = await browser.new_context(viewport={"width": 1366, "height": 768})
            page = await context.new_page()
            page.on("websocket", listen)
            bp = BrowserPage(page, context)
            await page.goto(url, timeout=STEP_TIMEOUT_MS)
            await bp.next.wait_for(timeout=STEP_TIMEOUT_MS)
            await page.wait_for_function(ROW_SHOWN, arg=[0], timeout=STEP_TIMEOUT_MS)
            await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]",
                                         timeout=STEP_TIMEOUT_MS)
            await page.wait_for_timeout(1000)  # late frames of the first run are not the click's
            mark = len(frames)
            await page.locator(".st-key-server_steps .st-key-next button").dispatch_event("click")
            await page.wait_for_function(ROW_SHOWN, arg=[1], timeout=STEP_TIMEOUT_MS)  # the server's step, drawn
            await page.wait_for_timeout(1000)
            sent = [d for kind, d in frames[mark:] if kind == "sent"]
            got = [d for kind, d in frames[mark:] if kind == "got"]
            await bp.close()
        finally:
            await browser.close()
    reruns = []
    for frame in sent:
        msg = BackMsg()
        msg.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
        if msg.WhichOneof("type") == "rerun_script":
            reruns.append((len(frame), json_format.MessageToDict(msg)))
    if len(reruns) != 1:
        raise RuntimeError(f"expected one rerun request for the click, saw {len(reruns)}")
    kinds: dict[str, int] = {}
    for frame in got:
        msg = ForwardMsg()
        msg.ParseFromString(frame)
        kind = msg.WhichOneof("type")
        if kind == "delta":
            kind = msg.delta.WhichOneof("type")
        kinds[kind] = kinds.get(kind, 0) + 1
    return {"bytes": reruns[0][0], "message": reruns[0][1], "answer": {"messages": len(got), "kinds": kinds,
                                                                        "bytes": sum(len(f) for f in got)}}


def capture_click(out: Path) -> dict:
    """Serve this tree's app on the shipped models (its default model and first example), capture a Next click,
    write it to `out` with where it came from."""
    import streamlit

    proc = serve(app_env(), port := free_port())
    try:
        found = asyncio.run(capture(f"http://127.0.0.1:{port}"))
    finally:
        stop(proc)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    record = {"what": "the BackMsg Chromium sent for one click on Explore's hidden server-side Next (first example "
                      "of the default model, fresh page), captured from Playwright's websocket framesent event",
              "how": "python -m benchmarks.browser_load_test --capture-click tests/fixtures/next_click.json",
              "captured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": commit, "streamlit": streamlit.__version__, **found}
    out.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=3)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--model", help="a model folder (default: a tiny random checkpoint built here)")
    parser.add_argument("--text", help="a normalised sentence every page types (default: the page's first example)")
    parser.add_argument("--capture-click", type=Path, metavar="PATH",
                        help="capture one real Next click (shipped models) into PATH and exit")
    args = parser.parse_args()
    if args.capture_click:
        record = capture_click(args.capture_click)
        print(json.dumps({k: record[k] for k in ("bytes", "answer", "commit")}))
        return
    report = run(args.sessions, args.steps, args.model, args.text)
    print(f"{report['sessions']} sessions x {report['steps_per_session']} steps on {report['model']}: "
          f"{report['steps_done']} steps, {report['errors']} errors; step latency p50 {report['p50_step_s']} s, "
          f"p95 {report['p95_step_s']} s, max {report['max_step_s']} s; server RSS {report['rss_start_mb']} MB "
          f"at start, {report['rss_loaded_mb']} MB with every page loaded, {report['rss_end_mb']} MB after "
          f"stepping (+{report['rss_growth_mb']} MB)", file=sys.stderr)
    print(json.dumps(report))


if __name__ == "__main__":
    main()
