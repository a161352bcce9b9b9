"""A class stepping Explore together: Chromium pages timed from the click to the new row while protocol sessions
step beside them, each sending the server exactly what a real Chromium page sends for one step of the served tree.

The issue's rig (`benchmarks.load_test --sessions 29 --browsers 1`) put one Chromium page beside protocol sessions
that clicked the server's Next, because a browser's step was a script run then. Since the stepper steps in the
browser, what a step sends is found, not assumed: before the bursts the first Chromium page takes one untimed
step while Playwright records the websocket frames it sends (from the click until the new row is drawn and
`SETTLE_MS` more, longer than the stepper's URL and sync timers). That step's messages are the plan every protocol
session replays per step (`replay`): a rerun with the server's Next as trigger is the protocol client's verified
Next click (harness/explore_session.click_verified, checked against a real click by tests/test_load.py); no
message is no message; anything else is refused (the client cannot play it). Every Chromium page's frames are
counted during the bursts too, and every protocol session's frames sent and received.

A burst: every page and session steps at the same instant, `--rounds` times, `--gap` s apart once all are drawn.
Chromium's click is timed inside the page (benchmarks/stepper_bench.CLICK: to the first animation frame that
shows the new row). Server CPU (utime + stime) over the bursts, per step of every page and session.

    .venv/bin/python -m benchmarks.burst_bench --old OLD_TREE --new NEW_TREE --sessions 29 --pages 1
    .venv/bin/python -m benchmarks.burst_bench --new NEW_TREE --sessions 0 --pages 30
    .venv/bin/python -m benchmarks.burst_bench --new NEW_TREE --sessions 0 --pages 1,2,4,8,16
    .venv/bin/python -m benchmarks.burst_bench --capture tests/fixtures/stepper_step.json   # this tree, 20 steps

Trees: checkouts (`git archive`) with `pkg/attention_lens` of symlinks; this venv serves
each. Prints one JSON line (a list of results per tree: one per class), each result also on stderr as it ends.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from benchmarks.stepper_bench import CLICK, DRAWN, FIRST, M_OF, TIMEOUT
from harness.browser import IDLE, launch
from harness.explore_session import TEXT, click_verified, explore_view, ready_to_click
from harness.measure import cpu_seconds, explore_query, percentile, rss_mb, tree_env
from harness.server import ROOT, app_env, served
from harness.st_client import Session

SETTLE_MS = 600  # after a step is drawn: longer than the stepper's URL (250 ms) and sync (300 ms) timers
MODEL = "everyday-en-fr"


def query(text: str = TEXT) -> str:
    """The address every page and session opens: the shipped everyday en-fr, `text`, greedy, grid of
    cross-attention, step 1 (a link any tree reads)."""
    return explore_query(text, MODEL)


# ---- a step's messages -----------------------------------------------------------------------------------------
def describe(frame: bytes | str) -> dict:
    """One BackMsg as the plan holds it: its kind; for a rerun, the key of the widget that triggered it and the
    keys of the values it carries (a widget id is `$$ID-<hash>-<key>`)."""
    from streamlit.proto.BackMsg_pb2 import BackMsg

    msg = BackMsg()
    msg.ParseFromString(frame if isinstance(frame, bytes) else frame.encode())
    kind = msg.WhichOneof("type")
    out: dict = {"kind": kind}
    if kind == "rerun_script":
        widgets = msg.rerun_script.widget_states.widgets
        out["trigger"] = next((w.id.split("-", 2)[-1] for w in widgets if w.WhichOneof("value") == "trigger_value"
                               and w.trigger_value), None)
        out["fragment"] = bool(msg.rerun_script.fragment_id)
    return out


class FrameLog:
    """The websocket frames a Playwright page sends and receives, in order."""

    def __init__(self, page):
        self.sent: list[bytes | str] = []
        self.got = 0
        page.on("websocket", self._listen)

    def _listen(self, ws) -> None:
        ws.on("framesent", lambda d: self.sent.append(d))
        ws.on("framereceived", lambda _d: self._got())

    def _got(self) -> None:
        self.got += 1


async def open_page(browser, url: str, text: str = TEXT):
    """A fresh context and page on `url` at step 1 of `text`, idle, with its frames logged."""
    context = await browser.new_context(viewport={"width": 1366, "height": 768})
    page = await context.new_page()
    log = FrameLog(page)
    await page.goto(url + query(text), timeout=TIMEOUT)
    await page.wait_for_function(DRAWN, arg=[0], timeout=TIMEOUT, polling=20)
    await page.wait_for_selector(IDLE, timeout=TIMEOUT)
    return context, page, log


async def step_page(page, row: int, m: int) -> tuple[float, int]:
    """Step from `row` (First step, untimed, at the run's end): (seconds from the click to the new row, new row)."""
    if row >= m - 1:
        await page.locator(FIRST).click()
        await page.wait_for_function(DRAWN, arg=[0], timeout=TIMEOUT, polling=5)
        await page.wait_for_selector(IDLE, timeout=TIMEOUT)
        row = 0
    seconds = await page.evaluate(CLICK, [row + 1]) / 1000
    return seconds, row + 1


async def captured_step(page, log: FrameLog, row: int, m: int) -> tuple[list[dict], int, int]:
    """One untimed step of a Chromium page with its frames: (the BackMsgs it sent, frames received, new row)."""
    await page.wait_for_timeout(SETTLE_MS)
    sent0, got0 = len(log.sent), log.got
    _, row = await step_page(page, row, m)
    await page.wait_for_selector(IDLE, timeout=TIMEOUT)
    await page.wait_for_timeout(SETTLE_MS)
    return [describe(f) for f in log.sent[sent0:]], log.got - got0, row


async def capture(url: str, steps: int, text: str = TEXT) -> dict:
    """A fresh Chromium page on `url` steps `steps` times with the visible Next: what it sent and received for each
    step."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await launch(p)
        try:
            context, page, log = await open_page(browser, url, text)
            # the page's load sent its runs' requests: the log hears the page (checked by tests/test_load.py)
            load_sent = [describe(f)["kind"] for f in log.sent]
            m, row, out = await page.evaluate(M_OF), 0, []
            for _ in range(steps):
                if row >= m - 1:  # First step is not a step of the plan
                    _, row = await step_page(page, row, m)
                    row = 0
                sent, got, row = await captured_step(page, log, row, m)
                out.append({"sent": sent, "received": got})
            await context.close()
        finally:
            await browser.close()
    return {"load_sent": load_sent, "steps": out}


def capture_to(path: Path, steps: int = 20) -> dict:
    """Serve this tree's app (shipped models) and write what a Chromium page sends for `steps` steps to `path`."""
    import streamlit

    with served(app_env(LENS_WARMUP="0")) as (url, _proc):
        found = asyncio.run(capture(url, steps))
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    record = {"what": "the websocket messages a Chromium page sent (BackMsg kind; a rerun's trigger) and the number "
                      "it received for each click on Explore's visible Next, from the click until the new row was "
                      f"drawn and {SETTLE_MS} ms more, captured with Playwright's websocket events",
              "how": "python -m benchmarks.burst_bench --capture tests/fixtures/stepper_step.json",
              "page": query(), "captured": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
              "commit": commit, "streamlit": streamlit.__version__, **found}
    path.write_text(json.dumps(record, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return record


# ---- a protocol session that steps as the browser does --------------------------------------------------------
class CountingSession(Session):
    """A protocol session that keeps the BackMsgs it sends and counts the ForwardMsgs it receives."""

    def __init__(self, url: str, timeout: float = 120.0):
        super().__init__(url, timeout)
        self.sent: list[bytes] = []
        self.got = 0
        self.idle = asyncio.Event()  # the server said its script is not running (it does, after each run's end)

    async def _connect(self, session_id: str = "") -> None:
        await super()._connect(session_id)
        send = self._ws.send

        async def counted(data, *a, **kw):
            self.sent.append(data)
            return await send(data, *a, **kw)

        self._ws.send = counted

    def _handle(self, msg, now: float, nbytes: int = 0) -> None:
        self.got += 1
        if msg.WhichOneof("type") == "session_status_changed":
            (self.idle.clear if msg.session_status_changed.script_is_running else self.idle.set)()
        super()._handle(msg, now, nbytes)


def replayable(plan: list[dict]) -> None:
    """Raise unless the protocol client can send what `plan` holds: nothing, or one rerun triggered by Next."""
    if len(plan) > 1 or any(msg["kind"] != "rerun_script" or msg.get("trigger") != "next" for msg in plan):
        raise ValueError(f"the protocol client cannot send this step's messages: {plan}")


async def replay(s: Session, plan: list[dict]) -> tuple[float | None, str | None]:
    """One step of `s` sending what `plan` (a captured browser step, `replayable`) sent: nothing, or the client's
    Next click, verified (First step, untimed, before it at the run's end). Returns (seconds until the server's
    answer was in, or None when nothing was sent; why it failed, or None)."""
    if not plan:
        return None, None
    await ready_to_click(s)
    click, why = await click_verified(s)
    return (None, why) if why else (click.seconds, None)


async def open_session(url: str, text: str = TEXT) -> CountingSession:
    s = CountingSession(url + query(text))
    run = await s.open()
    view = explore_view(s.page)
    if run.problems or view.step != 1 or view.next is None or view.figure is None:
        await s.close()
        raise RuntimeError(f"Explore not at step 1: step {view.step}, problems {run.problems[:2]}")
    # the run's last word comes after its end: the session status (not running), as a browser's page gets it
    await asyncio.wait_for(s.idle.wait(), s.timeout)
    return s


# ---- the bursts ------------------------------------------------------------------------------------------------
async def burst(url: str, pid: int, sessions: int, pages: int, rounds: int, gap: float, text: str = TEXT) -> dict:
    """`pages` Chromium pages and `sessions` protocol sessions on one served app step together `rounds` times."""
    from playwright.async_api import async_playwright

    out: dict = {"sessions": sessions, "pages": pages, "rounds": rounds}
    async with async_playwright() as p:
        browser = await launch(p)
        opened: list = []
        protocol: list[CountingSession] = []
        try:
            gate = asyncio.Semaphore(4)

            async def one_page():
                async with gate:
                    return await open_page(browser, url, text)

            t0 = time.perf_counter()
            opened = list(await asyncio.gather(*(one_page() for _ in range(pages))))
            out["pages_open_s"] = round(time.perf_counter() - t0, 1)
            m = await opened[0][1].evaluate(M_OF)
            rows = [0] * pages
            # the plan: what the first page sends for one step of this tree
            plan, got, rows[0] = await captured_step(opened[0][1], opened[0][2], rows[0], m)
            out["plan"], out["plan_received"] = plan, got
            replayable(plan)

            async def one_session():
                async with gate:
                    return await open_session(url, text)

            t0 = time.perf_counter()
            protocol = list(await asyncio.gather(*(one_session() for _ in range(sessions))))
            out["sessions_open_s"] = round(time.perf_counter() - t0, 1)
            out["rss_loaded_mb"] = round(rss_mb(pid), 1)
            page_lat, proto_lat, errors = [], [], []
            sent0 = [len(log.sent) for _, _, log in opened]
            got0 = [log.got for _, _, log in opened]
            psent0, pgot0 = [len(s.sent) for s in protocol], [s.got for s in protocol]
            cpu = 0.0
            t_burst = time.perf_counter()
            for _ in range(rounds):
                await asyncio.sleep(gap)
                c0 = cpu_seconds(pid)

                async def page_step(i: int) -> None:
                    seconds, rows[i] = await step_page(opened[i][1], rows[i], m)
                    page_lat.append(seconds)

                async def session_step(s: Session) -> None:
                    seconds, why = await replay(s, plan)
                    if why:
                        errors.append(why)
                    elif seconds is not None:
                        proto_lat.append(seconds)

                await asyncio.gather(*(page_step(i) for i in range(pages)), *(session_step(s) for s in protocol))
                # the server's share of the round: until every page is idle again (an answer may still be drawn)
                await asyncio.gather(*(pg.wait_for_selector(IDLE, timeout=TIMEOUT) for _, pg, _ in opened))
                cpu += cpu_seconds(pid) - c0
            out["burst_s"] = round(time.perf_counter() - t_burst, 1)
            steps = rounds * (pages + sessions)
            out.update({
                "page_p50_ms": round(1000 * statistics.median(page_lat), 1),
                "page_p95_ms": round(1000 * percentile(page_lat, 95), 1),
                "page_max_ms": round(1000 * max(page_lat), 1), "page_steps": len(page_lat),
                "session_p50_ms": round(1000 * statistics.median(proto_lat), 1) if proto_lat else None,
                "session_p95_ms": round(1000 * percentile(proto_lat, 95), 1) if proto_lat else None,
                "session_answered_steps": len(proto_lat), "errors": errors[:5], "error_count": len(errors),
                "server_cpu_ms_per_step": round(1000 * cpu / steps, 3), "server_cpu_s": round(cpu, 3),
                "page_frames_sent_per_step": round(sum(len(log.sent) - s0 for (_, _, log), s0 in zip(opened, sent0))
                                                   / (rounds * pages), 2),
                "page_frames_received_per_step": round(sum(log.got - g0 for (_, _, log), g0 in zip(opened, got0))
                                                       / (rounds * pages), 2),
                "session_frames_sent_per_step": round(sum(len(s.sent) - s0 for s, s0 in zip(protocol, psent0))
                                                      / (rounds * sessions), 2) if sessions else None,
                "session_frames_received_per_step": round(sum(s.got - g0 for s, g0 in zip(protocol, pgot0))
                                                          / (rounds * sessions), 2) if sessions else None,
                "rss_mb": round(rss_mb(pid), 1), "load_average": os.getloadavg()})
        finally:
            await asyncio.gather(*(s.close() for s in protocol), return_exceptions=True)
            await browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="a checkout whose Explore runs the server on every step")
    parser.add_argument("--new", type=Path, help="a checkout with the stepper component")
    parser.add_argument("--sessions", default="29", help="protocol sessions, or a list: 29,199")
    parser.add_argument("--pages", default="1", help="Chromium pages, or a list: 1,2,4 (paired with --sessions)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--gap", type=float, default=1.0)
    parser.add_argument("--text", default=TEXT)
    parser.add_argument("--capture", type=Path, metavar="PATH", help="write what this tree's page sends per step")
    parser.add_argument("--capture-steps", type=int, default=20)
    args = parser.parse_args(argv)
    if args.capture:
        record = capture_to(args.capture, args.capture_steps)
        print(json.dumps({"steps": len(record["steps"]), "sent": sum(len(s["sent"]) for s in record["steps"]),
                          "received": sum(s["received"] for s in record["steps"])}))
        return 0
    sessions = [int(x) for x in args.sessions.split(",")]
    pages = [int(x) for x in args.pages.split(",")]
    if len(sessions) == 1:
        sessions *= len(pages)
    if len(pages) == 1:
        pages *= len(sessions)
    if len(sessions) != len(pages):
        parser.error("--sessions and --pages: one value, or lists of the same length")
    result: dict = {}
    for name, tree in (("old", args.old), ("new", args.new)):
        if tree is None:
            continue
        result[name] = []
        for n, k in zip(sessions, pages):
            with served(tree_env(tree.resolve()), tree=tree.resolve()) as (url, proc):
                got = asyncio.run(burst(url, proc.pid, n, k, args.rounds, args.gap, args.text))
            print(json.dumps({"tree": name, **got}), file=sys.stderr, flush=True)
            result[name].append(got)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
