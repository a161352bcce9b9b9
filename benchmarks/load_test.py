"""What one server (or `./run.sh serve --replicas K`) holds for a class: N sessions from one client process over
Streamlit's own websocket protocol, and real Chromium pages beside them.

Starts a fresh `streamlit run app/streamlit_app.py` on 127.0.0.1 (or drives `--url`). Every protocol session
opens Explore on the app's default model, types `--text`, and then clicks Next with the message Chromium sends
(the page's query string and script hash, every widget's value, context_info, the cached elements' hashes:
harness/st_client.py; tests/test_load.py checks it field by field against a captured real click). Alongside,
`--browsers` Chromium pages (benchmarks/browser_load_test.BrowserPage) do exactly what the sessions do. Two
measurements follow, on the same sessions:

1. **Burst**: `--rounds` times, the whole class clicks Next at the same instant (the teacher says "next"), then
   waits until every click is drawn and `--gap` seconds more.
2. **Random arrivals**: for `--seconds`, every session clicks on its own: its first click at a uniform random
   time within one mean think time, then after each drawn click an independent exponential think time of mean
   `--think` seconds (at least MIN_THINK), so clicks fall together as chance makes them.

What a protocol session sends for a step is what the served tree's Chromium page sends (`--step browser`, the
default): before the phases the first Chromium page takes one untimed step while its websocket frames are recorded
(with no page, tests/fixtures/stepper_step.json, captured the same way), and every protocol session sends exactly
that per step (benchmarks/burst_bench.replay: nothing, or the Next click below). Explore's stepper steps in the
browser and sends nothing, so its protocol sessions then hold their page open and step silently (counted, not
timed). `--step server` makes every protocol step the server's Next click regardless (a script run per step: the
rig before the stepper, and what a server run per step costs).

A protocol click counts only when it is verified: the run it caused must show the step counter one higher and a
new attention figure (its spec differs from the one before). Its latency runs from sending the click to the
last message of the run it caused (`script_finished`); anything else is an error (a wrong step, an unchanged
figure, an exception or error box, a timeout, a dropped connection). A browser click's latency runs from the
click until the attention chart has drawn the new row (its aria description names it). At a run's last step a
session clicks First step, untimed, and goes on.

Server CPU seconds (utime + stime from /proc) and messages per click are taken per phase; RSS after the run.
With --url, pass the server's pid(s) with --server-pid to get CPU and RSS.

    .venv/bin/python -m benchmarks.load_test --sessions 30 --browsers 1 --rounds 10 --seconds 60 --think 4
    .venv/bin/python -m benchmarks.load_test --url http://127.0.0.1:8501 --server-pid P1 --server-pid P2 ...
    .venv/bin/python -m benchmarks.load_test --cost BEFORE_TREE [AFTER_TREE]   # CPU and messages per click

`--cost BEFORE [AFTER]`: what one Next click costs, BEFORE's app (e.g. a git worktree of an earlier commit)
against AFTER's (default: this tree), alternating fresh servers `--cost-rounds` times; in each, two sessions
take turns clicking `--cost-clicks` times each, one click at a time: server CPU, messages, blocks and bytes per
click (medians over the rounds).

Progress goes to stderr, details on stdout; the LAST line is one JSON object (keys: see `summarise`).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from harness.browser import launch
from harness.explore_session import TEXT, Click, click_next, click_verified, explore_view, open_explore, ready_to_click
from harness.measure import cpu_seconds, percentile, rss_mb
from harness.server import ROOT, app_env, free_port, serve, served_replicas, stop, wait_healthy
from harness.st_client import Session

MIN_THINK = 0.3  # s: nobody reads a step faster
STEP_FIXTURE = ROOT / "tests" / "fixtures" / "stepper_step.json"  # what Chromium sent per step of Explore
__all__ = ["TEXT", "Session", "click_next", "explore_view", "free_port", "open_explore", "run", "server_env",
           "wait_healthy"]


def server_env(model: str | None = None) -> dict[str, str]:
    """This shell's environment without its LENS_ settings: the server sees only the shipped models (or `model`)."""
    return app_env(model)


@dataclass
class Tally:
    """What one session (protocol or browser) measured in one phase."""

    seconds: list[float] = field(default_factory=list)  # latencies of verified clicks
    figure_seconds: list[float] = field(default_factory=list)
    messages: list[int] = field(default_factory=list)
    blocks: list[int] = field(default_factory=list)
    nbytes: list[int] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    silent: int = 0  # steps that sent the server nothing (as the browser's)

    def add(self, click: Click) -> None:
        self.seconds.append(click.seconds)
        self.figure_seconds.append(click.figure_seconds)
        self.messages.append(click.run.messages)
        self.blocks.append(click.run.blocks)
        self.nbytes.append(click.run.nbytes)


class Student:
    """A protocol session or a Chromium page, clicking Next when told."""

    def __init__(self, session: Session | None = None, page=None, plan: list[dict] | None = None):
        """`plan`: what a step sends (a captured browser step, burst_bench.replayable): [] nothing, None or one
        rerun the server's Next click."""
        self.session, self.page, self.plan = session, page, plan

    async def prepare(self) -> None:
        if self.session is not None:
            await ready_to_click(self.session)
        else:
            await self.page.ready()

    async def click(self, tally: Tally) -> None:
        try:
            if self.session is not None and self.plan == []:
                tally.silent += 1  # the browser sends nothing for this step: neither does its protocol twin
            elif self.session is not None:
                click, why = await click_verified(self.session)
                if why:
                    tally.errors.append(why)
                else:
                    tally.add(click)
            else:
                tally.seconds.append(await self.page.click_next())
        except TimeoutError:
            tally.errors.append("click timed out")
        except Exception as exc:  # Playwright's timeouts and closed pages; a failed click is counted, not fatal
            tally.errors.append(f"{type(exc).__name__}: {exc}"[:300])

    async def close(self) -> None:
        if self.session is not None:
            await self.session.close()
        if self.page is not None:
            await self.page.close()


async def burst(students: list[Student], rounds: int, gap: float) -> list[Tally]:
    """`rounds` times: every student clicks Next at once; the next round starts `gap` s after the last is drawn."""
    tallies = [Tally() for _ in students]
    for _ in range(rounds):
        await asyncio.gather(*(st.prepare() for st in students))
        await asyncio.sleep(gap)
        await asyncio.gather(*(st.click(t) for st, t in zip(students, tallies)))
    return tallies


async def random_arrivals(students: list[Student], seconds: float, think: float, rng: random.Random) -> list[Tally]:
    """Every student on its own for `seconds`: first click at a uniform random time within `think`, then an
    exponential think time of mean `think` (at least MIN_THINK) after each drawn click."""
    tallies = [Tally() for _ in students]
    end = time.perf_counter() + seconds

    async def student(st: Student, tally: Tally, first: float, seed: int) -> None:
        own = random.Random(seed)
        await asyncio.sleep(first)
        while time.perf_counter() < end:
            await st.prepare()
            await st.click(tally)
            await asyncio.sleep(max(MIN_THINK, own.expovariate(1 / think)))

    await asyncio.gather(*(student(st, t, rng.uniform(0, think), rng.randrange(2**32))
                           for st, t in zip(students, tallies)))
    return tallies


# ---- the class -----------------------------------------------------------------------------------------------
async def open_class(url: str, sessions: int, browsers: int, text: str | None, playwright) -> tuple[list, list, dict]:
    """Open every protocol session (a few at a time, as pages of a class arriving over a minute) and every
    Chromium page; returns (students, browser students, load times and failures)."""
    gate = asyncio.Semaphore(4)
    loads, failures = [], []

    async def one() -> Student | None:
        async with gate:
            t0 = time.perf_counter()
            try:
                s = await open_explore(url, text)
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}"[:300])
                return None
            loads.append(time.perf_counter() - t0)
            return Student(session=s)

    students = [s for s in await asyncio.gather(*(one() for _ in range(sessions))) if s is not None]
    pages = []
    if browsers:
        from benchmarks.browser_load_test import BrowserPage

        browser = await launch(playwright)
        for _ in range(browsers):
            try:
                pages.append(Student(page=await BrowserPage.open(browser, url, text)))
            except Exception as exc:
                failures.append(f"browser: {type(exc).__name__}: {exc}"[:300])
    return students, pages, {"loads": loads, "failures": failures,
                             "replicas": Counter(s.session.replica for s in students if s.session.replica)}


def fixture_plan() -> list[dict]:
    """What a Chromium page sent for one step of Explore (tests/fixtures/stepper_step.json, every captured step
    alike), for a class with no page to capture it from."""
    steps = json.loads(STEP_FIXTURE.read_text(encoding="utf-8"))["steps"]
    plans = {json.dumps(st["sent"]) for st in steps}
    if len(plans) != 1:
        raise ValueError(f"{STEP_FIXTURE.name}: the captured steps differ: {sorted(plans)}")
    return steps[0]["sent"]


async def drive(url: str, sessions: int, browsers: int, rounds: int, gap: float, seconds: float, think: float,
                text: str | None, pids: list[int], seed: int, step: str = "browser") -> dict:
    from playwright.async_api import async_playwright

    from benchmarks.burst_bench import replayable

    async with async_playwright() as p:
        protocol, pages, opened = await open_class(url, sessions, browsers, text, p)
        everyone = protocol + pages
        out = {"opened": opened, "rss_loaded_mb": sum(rss_mb(q) for q in pids) if pids else None, "plan": None}
        try:
            if step == "browser":
                plan = await pages[0].page.captured_step() if pages else fixture_plan()
                replayable(plan)
                for st in protocol:
                    st.plan = plan
                out["plan"] = plan
            for name, phase in (("burst", lambda: burst(everyone, rounds, gap)),
                                ("random", lambda: random_arrivals(everyone, seconds, think, random.Random(seed)))):
                if (name == "burst" and not rounds) or (name == "random" and not seconds):
                    continue
                cpu0, t0 = sum(cpu_seconds(q) for q in pids), time.perf_counter()
                tallies = await phase()
                out[name] = {"protocol": tallies[:len(protocol)], "browser": tallies[len(protocol):],
                             "seconds": time.perf_counter() - t0,
                             "cpu_s": sum(cpu_seconds(q) for q in pids) - cpu0 if pids else None}
                print(f"{name}: done in {out[name]['seconds']:.1f} s", file=sys.stderr)
        finally:
            await asyncio.gather(*(st.close() for st in everyone), return_exceptions=True)
        out["rss_mb"] = sum(rss_mb(q) for q in pids) if pids else None
    return out


def ms(values: list[float], q: float | None = None) -> int | None:
    if not values:
        return None
    return round(1000 * (max(values) if q is None else statistics.median(values) if q == 50 else percentile(values, q)))


def summarise(out: dict, sessions: int, browsers: int) -> dict:
    """The JSON line: class size; burst, random-arrival and browser latencies (ms: p50, p95, max); verified clicks
    and errors; server CPU and messages per protocol click; RSS."""
    summary: dict = {"sessions": sessions, "browsers": browsers}
    clicks = errors = 0
    for name in ("burst", "random"):
        phase = out.get(name)
        proto = [x for t in phase["protocol"] for x in t.seconds] if phase else []
        browser = [x for t in phase["browser"] for x in t.seconds] if phase else []
        summary.update({f"{name}_p50_ms": ms(proto, 50), f"{name}_p95_ms": ms(proto, 95), f"{name}_max_ms": ms(proto),
                        f"{name}_browser_p50_ms": ms(browser, 50), f"{name}_browser_p95_ms": ms(browser, 95),
                        f"{name}_browser_max_ms": ms(browser), f"{name}_clicks": len(proto) + len(browser)})
        if phase:
            clicks += len(proto) + len(browser)
            errors += sum(len(t.errors) for t in phase["protocol"] + phase["browser"])
    both = [t for name in ("burst", "random") if out.get(name) for t in out[name]["protocol"]]
    n = sum(len(t.seconds) for t in both)
    cpu = [out[name]["cpu_s"] for name in ("burst", "random") if out.get(name) and out[name]["cpu_s"] is not None]
    browser_clicks = sum(len(t.seconds) for name in ("burst", "random") if out.get(name) for t in out[name]["browser"])
    silent = sum(t.silent for t in both)  # protocol steps that sent nothing, as the browser's: steps all the same
    summary.update({
        "clicks": clicks, "errors": errors + len(out["opened"]["failures"]),
        # server CPU of every step (the browsers' and the silent ones too) over the steps; messages and blocks of
        # protocol clicks
        "cpu_ms_per_click": round(1000 * sum(cpu) / (n + browser_clicks + silent), 2)
        if cpu and n + browser_clicks + silent else None,
        "messages_per_click": round(sum(sum(t.messages) for t in both) / n, 1) if n else None,
        "blocks_per_click": round(sum(sum(t.blocks) for t in both) / n, 1) if n else None,
        "server_rss_mb": round(out["rss_mb"], 1) if out["rss_mb"] is not None else None,
        "server_cpu_s": round(sum(cpu), 2) if cpu else None,
    })
    return summary


def run(sessions: int = 10, browsers: int = 0, rounds: int = 5, gap: float = 1.0, seconds: float = 30,
        think: float = 4.0, text: str | None = TEXT, url: str | None = None, pids: list[int] = (),
        server_args: list[str] = (), model: str | None = None, seed: int = 31, step: str = "browser") -> dict:
    """The measurement; returns the summary (the JSON line) and the details. `step`: "browser" (a protocol
    step sends what the Chromium page's step sent) or "server" (the server's Next click)."""
    proc = None
    if url is None:
        port = free_port()
        proc = serve(server_env(model), port, extra=list(server_args))
        url, pids = f"http://127.0.0.1:{port}", [proc.pid]
    try:
        rss_start = sum(rss_mb(p) for p in pids)
        out = asyncio.run(drive(url, sessions, browsers, rounds, gap, seconds, think, text, list(pids), seed, step))
    finally:
        if proc is not None:
            stop(proc)
    summary = summarise(out, sessions, browsers)
    errors = [e for name in ("burst", "random") if out.get(name) for t in out[name]["protocol"] + out[name]["browser"]
              for e in t.errors]
    loads = out["opened"]["loads"]
    details = {
        "step": step, "plan": out["plan"],
        "silent_steps": sum(t.silent for name in ("burst", "random") if out.get(name) for t in out[name]["protocol"]),
        "rounds": rounds, "gap_s": gap, "random_s": seconds, "think_s": think, "text": text,
        "burst_seconds": round(out["burst"]["seconds"], 1) if out.get("burst") else None,
        "random_clicks_per_s": round(summary["random_clicks"] / out["random"]["seconds"], 2)
        if out.get("random") else None,
        "burst_figure_p95_ms": ms([x for t in out["burst"]["protocol"] for x in t.figure_seconds], 95)
        if out.get("burst") else None,
        "bytes_per_click": round(statistics.mean([b for name in ("burst", "random") if out.get(name)
                                                  for t in out[name]["protocol"] for b in t.nbytes]))
        if summary["messages_per_click"] else None,
        "server_cores_busy": {name: round(out[name]["cpu_s"] / out[name]["seconds"], 2)
                              for name in ("burst", "random") if out.get(name) and out[name]["cpu_s"] is not None},
        "first_load_p50_s": round(statistics.median(loads), 2) if loads else None,
        "first_load_max_s": round(max(loads), 2) if loads else None,
        "rss_start_mb": round(rss_start, 1) if pids else None,
        "rss_loaded_mb": round(out["rss_loaded_mb"], 1) if out["rss_loaded_mb"] is not None else None,
        "sessions_per_replica": dict(out["opened"]["replicas"]), "load_average": os.getloadavg(),
        "server_args": list(server_args), "open_failures": out["opened"]["failures"][:3], "error_samples": errors[:5],
    }
    return {"summary": summary, "details": details}


@contextlib.contextmanager
def cluster(replicas: int, server_args: list[str] = ()):
    """K replicas behind nginx (harness/server.served_replicas: deploy/serve.py, what `./run.sh serve
    --replicas K` runs) on a free port of 127.0.0.1; yields (its URL, the replicas' pids). Stopped after."""
    with served_replicas(replicas, server_env(), server_args) as (url, pids, _):
        yield url, list(pids.values())


def sweep(classes: list[int], replicas: int, browsers: int, **kw) -> dict:
    """One fresh server (or `./run.sh serve --replicas K` cluster when replicas > 0) per class size N (N - browsers
    protocol sessions and `browsers` Chromium pages); the largest N whose burst still drew within 1 s at p95 in the
    browser, with no error."""
    rows = []
    for n in classes:
        if replicas:
            with cluster(replicas, kw.get("server_args", ())) as (url, pids):
                got = run(n - browsers, browsers, url=url, pids=pids, **kw)
        else:
            got = run(n - browsers, browsers, **kw)
        row = {"class": n, "replicas": replicas or None, **got["summary"]}
        print(json.dumps(got["details"]))
        print(json.dumps(row), flush=True)
        rows.append(row)
    fits = [r["class"] for r in rows if r["errors"] == 0 and r["burst_browser_p95_ms"] is not None
            and r["burst_browser_p95_ms"] <= 1000]
    return {"replicas": replicas or None, "classes": classes,
            "largest_class_burst_p95_within_1s": max(fits, default=None),
            "burst_browser_p95_ms": {r["class"]: r["burst_browser_p95_ms"] for r in rows},
            "random_browser_p95_ms": {r["class"]: r["random_browser_p95_ms"] for r in rows},
            "random_p95_ms": {r["class"]: r["random_p95_ms"] for r in rows}}


# ---- what a click costs: two trees side by side -------------------------------------------------------------
async def cost_clicks(url: str, sessions: int, clicks: int, pid: int, text: str | None, pause: float = 0.0) -> dict:
    """`sessions` sessions, each in turn clicking Next `clicks` times, one click at a time (no queueing), `pause`
    seconds after each answered click (0: the next click follows at once, while the server may still be tidying
    up after the run it just answered)."""
    opened = [await open_explore(url, text) for _ in range(sessions)]
    tally = Tally()
    cpu = 0.0
    try:
        for _ in range(clicks):
            for s in opened:
                await ready_to_click(s)
                c0 = cpu_seconds(pid)  # before the pause: the windows tile the time, the tidying-up included
                await asyncio.sleep(pause)
                click, why = await click_verified(s)
                cpu += cpu_seconds(pid) - c0
                tally.errors.append(why) if why else tally.add(click)
    finally:
        await asyncio.gather(*(s.close() for s in opened))
    n = len(tally.seconds)
    return {"clicks": n, "errors": len(tally.errors), "cpu_ms_per_click": round(1000 * cpu / n, 2) if n else None,
            "p50_ms": ms(tally.seconds, 50), "messages_per_click": statistics.mean(tally.messages) if n else None,
            "blocks_per_click": statistics.mean(tally.blocks) if n else None,
            "bytes_per_click": round(statistics.mean(tally.nbytes)) if n else None}


def cost(trees: list[Path], rounds: int, sessions: int, clicks: int, text: str | None, pause: float = 0.0) -> dict:
    """Alternate fresh servers of each tree `rounds` times; medians per tree of the per-click figures."""
    per_tree: dict[str, list[dict]] = {str(t): [] for t in trees}
    for r in range(rounds):
        for tree in trees:
            port = free_port()
            proc = serve(server_env(), port, tree=tree)
            try:
                got = asyncio.run(cost_clicks(f"http://127.0.0.1:{port}", sessions, clicks, proc.pid, text,
                                             pause))
            finally:
                stop(proc)
            print(json.dumps({"round": r + 1, "tree": str(tree), **got}))
            per_tree[str(tree)].append(got)
    keys = ("cpu_ms_per_click", "p50_ms", "messages_per_click", "blocks_per_click", "bytes_per_click")
    return {tree: {k: statistics.median(g[k] for g in runs if g[k] is not None) for k in keys}
            | {"errors": sum(g["errors"] for g in runs)} for tree, runs in per_tree.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10, help="protocol sessions")
    parser.add_argument("--browsers", type=int, default=1, help="Chromium pages beside them")
    parser.add_argument("--rounds", type=int, default=5, help="burst rounds (0: no burst)")
    parser.add_argument("--gap", type=float, default=1.0, help="seconds between burst rounds")
    parser.add_argument("--seconds", type=float, default=30, help="length of the random-arrival phase (0: none)")
    parser.add_argument("--think", type=float, default=4.0, help="mean think time between a student's clicks")
    parser.add_argument("--seed", type=int, default=31)
    parser.add_argument("--text", default=TEXT, help="the sentence every session types ('' keeps the example)")
    parser.add_argument("--url", help="drive a running server (or proxy) instead of starting one")
    parser.add_argument("--server-pid", type=int, action="append", default=[], help="with --url: pid(s) to measure")
    parser.add_argument("--server-arg", action="append", default=[], help="an option for `streamlit run`")
    parser.add_argument("--model", help="a checkpoint folder to serve (default: the shipped models)")
    parser.add_argument("--step", choices=("browser", "server"), default="browser",
                        help="a protocol step sends what the Chromium page's step sent (browser) or clicks the "
                             "server's Next (server: a script run per step)")
    parser.add_argument("--quick", action="store_true", help="a tiny run: 3 sessions, no browser, 2 rounds, 3 s")
    parser.add_argument("--sweep", help="class sizes, e.g. 10,20,30: one fresh server per size (sessions + browsers)")
    parser.add_argument("--replicas", type=int, default=0,
                        help="serve with `./run.sh serve --replicas K` (nginx, sticky sessions) instead of one server")
    parser.add_argument("--cost", type=Path, nargs="+", metavar="TREE",
                        help="per-click cost of the first TREE's app against the second's (default: this tree)")
    parser.add_argument("--cost-rounds", type=int, default=3)
    parser.add_argument("--cost-clicks", type=int, default=20, help="clicks per session per round")
    parser.add_argument("--cost-pause", type=float, default=0.0, help="seconds between one click's answer and the next")
    args = parser.parse_args()
    if args.quick:
        args.sessions, args.browsers, args.rounds, args.gap, args.seconds, args.think = 3, 0, 2, 0.2, 3, 0.5
    if args.cost:
        before, after = args.cost[0].resolve(), (args.cost[1:] or [ROOT])[0].resolve()
        medians = cost([before, after], args.cost_rounds, 2, args.cost_clicks, args.text or None, args.cost_pause)
        print(json.dumps({"before": medians[str(before)], "after": medians[str(after)], "before_tree": str(before),
                          "after_tree": str(after)}))
        return
    kw = {"rounds": args.rounds, "gap": args.gap, "seconds": args.seconds, "think": args.think,
          "text": args.text or None, "server_args": args.server_arg, "seed": args.seed, "step": args.step}
    if args.sweep:
        print(json.dumps(sweep([int(n) for n in args.sweep.split(",")], args.replicas, args.browsers, **kw)))
        return
    if args.replicas:
        with cluster(args.replicas, args.server_arg) as (url, pids):
            report = run(args.sessions, args.browsers, url=url, pids=pids, **kw)
        print(json.dumps(report["details"]))
        print(json.dumps(report["summary"]))
        return
    report = run(args.sessions, args.browsers, args.rounds, args.gap, args.seconds, args.think, args.text or None,
                 args.url, args.server_pid, args.server_arg, args.model, args.seed, args.step)
    print(json.dumps(report["details"]))
    print(json.dumps(report["summary"]))


if __name__ == "__main__":
    main()
