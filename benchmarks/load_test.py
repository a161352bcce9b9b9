"""What one server holds: N sessions from one client process over Streamlit's own websocket protocol, no browsers.

Starts a fresh `streamlit run app/streamlit_app.py` on 127.0.0.1 (or drives `--url`). Every session loads the
Explore page (on the shipped en-fr model), types `--text`, then clicks Next once every `--interval` seconds for
`--steps` clicks. The sessions' first clicks are spread evenly over one interval, as a class's would be; a
session waits for its click to be drawn before the next one (a student does too), so an overloaded server shows
as long clicks, not as a pile of queued ones.

A click counts only when it is verified: the run it caused must show the step counter one higher and a new
attention figure (its spec differs from the one before). Its latency runs from sending the click to the arrival
of the frame that carries the new figure. Anything else is an error: a wrong step, an unchanged figure, an
exception or error box on the page, a timeout, a dropped connection.

Server CPU seconds (utime + stime from /proc) cover the stepping only (every page loaded before it starts);
RSS is the server's VmRSS after it. With --url, pass the server's pid(s) with --server-pid to get them.

    .venv/bin/python benchmarks/load_test.py --sessions 30 --steps 20 --interval 2
    .venv/bin/python benchmarks/load_test.py --sessions 10 --server-arg=--runner.postScriptGC=false

Progress goes to stderr, details on stdout; the LAST line is one JSON object: sessions, steps (verified clicks in
all), p50_ms, p95_ms, max_ms (click latency), errors, server_rss_mb, server_cpu_s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from st_client import Session, Shown, find  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
TEXT = "the black cat that the small dog chased sat on the mat near the bank of the river ."  # 23 steps on en-fr
STEP_TEXT = re.compile(r"\*\*Step (\d+) of (\d+)\*\*")


@dataclass
class ExploreView:
    step: int | None
    total: int | None
    next: Shown | None
    figure: Shown | None


def explore_view(page: dict) -> ExploreView:
    """The Explore page's step counter, Next button and attention figure, found by text and key.
    The one place to adapt when the page is reworked."""
    step = total = None
    for path in sorted(page):
        el = page[path].element
        if el.WhichOneof("type") == "markdown" and (m := STEP_TEXT.fullmatch(el.markdown.body)):
            step, total = int(m[1]), int(m[2])
    figure = next((f for kind in ("echarts_chart", "plotly_chart") if (f := find(page, kind, key="attention"))), None)
    return ExploreView(step, total, find(page, "button", key="next"), figure)


def spec(shown: Shown) -> str:
    """A chart element's spec (an ECharts option or a plotly figure, as JSON)."""
    return getattr(shown.element, shown.element.WhichOneof("type")).spec


# ---- the server --------------------------------------------------------------------------------------------------
def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def server_env(model: str | None = None) -> dict[str, str]:
    """This shell's environment without its LENS_ settings: the server sees only the shipped models (or `model`)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    if model:
        path = str(Path(model).resolve())
        env.update(LENS_MODEL_DIRS=path, LENS_DEFAULT_MODEL=path)
    return env


def start_server(port: int, env: dict[str, str], extra: list[str] = ()) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "streamlit", "run", str(ROOT / "app" / "streamlit_app.py"), "--server.headless",
           "true", "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats",
           "false", "--server.fileWatcherType", "none", *extra]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wait_healthy(f"http://127.0.0.1:{port}", proc)
    return proc


def wait_healthy(url: str, proc: subprocess.Popen | None = None, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:]}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not become healthy within {seconds:.0f} s")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime, stime


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    return ordered[max(1, -(-len(ordered) * q // 100)) - 1]


# ---- one session -------------------------------------------------------------------------------------------------
async def open_explore(url: str, text: str | None, timeout: float = 120) -> Session:
    """A session on the Explore page at step 1 of `text`'s decoding (raises if the page is not as expected)."""
    s = Session(url, timeout=timeout)
    run = await s.open()
    if text:
        run = await s.rerun(source=text)
    view = explore_view(s.page)
    if run.problems or view.step != 1 or view.next is None or view.figure is None:
        await s.close()
        raise RuntimeError(f"Explore page not at step 1: step {view.step}, problems {run.problems[:2]}")
    return s


async def click_next(s: Session) -> tuple[float | None, str | None]:
    """Click Next; (seconds until the new figure's frame arrived, None) when verified, else (None, why)."""
    before = explore_view(s.page)
    if before.next is None or before.next.element.button.disabled:
        return None, f"no enabled Next at step {before.step}"
    old_spec = spec(before.figure) if before.figure else None
    t0 = time.perf_counter()
    run = await s.rerun(trigger=before.next)
    after = explore_view(s.page)
    if run.problems:
        return None, run.problems[0]
    if after.step != before.step + 1:
        return None, f"step {before.step} -> {after.step}"
    fig = after.figure
    if fig is None or fig.run_id != run.run_id or spec(fig) == old_spec:
        return None, f"no new figure at step {after.step}"
    return fig.arrived - t0, None


async def one_session(url: str, text: str | None, steps: int, interval: float, offset: float,
                      ready: asyncio.Event, start: asyncio.Event) -> dict:
    out = {"latencies": [], "errors": [], "load_s": None, "replica": None}
    s = None
    try:
        t0 = time.perf_counter()
        s = await open_explore(url, text)
        out["load_s"] = time.perf_counter() - t0
        out["replica"] = s.replica
        ready.set()
        await start.wait()
        await asyncio.sleep(offset)
        for _ in range(steps):
            tick = time.perf_counter()
            try:
                latency, why = await click_next(s)
            except TimeoutError:
                latency, why = None, "click timed out"
            if why:
                out["errors"].append(why)
                if s.closed_reason:
                    break
            else:
                out["latencies"].append(latency)
            await asyncio.sleep(max(0.0, tick + interval - time.perf_counter()))
    except Exception as exc:  # a failed session is reported, not a crashed measurement
        out["errors"].append(f"{type(exc).__name__}: {exc}"[:300])
    finally:
        ready.set()
        if s is not None:
            await s.close()
    return out


async def drive(url: str, sessions: int, steps: int, interval: float, text: str | None, pids: list[int]) -> dict:
    start = asyncio.Event()
    ready = [asyncio.Event() for _ in range(sessions)]
    tasks = [asyncio.create_task(one_session(url, text, steps, interval, i * interval / sessions, r, start))
             for i, r in enumerate(ready)]
    await asyncio.gather(*(r.wait() for r in ready))
    cpu0 = sum(cpu_seconds(p) for p in pids)
    rss_loaded = sum(rss_mb(p) for p in pids)
    t0 = time.perf_counter()
    start.set()
    results = await asyncio.gather(*tasks)
    return {"results": results, "seconds": time.perf_counter() - t0, "rss_loaded_mb": rss_loaded,
            "cpu_s": sum(cpu_seconds(p) for p in pids) - cpu0 if pids else None,
            "rss_mb": sum(rss_mb(p) for p in pids) if pids else None}


def run(sessions: int = 10, steps: int = 20, interval: float = 2.0, text: str | None = TEXT, url: str | None = None,
        pids: list[int] = (), server_args: list[str] = (), model: str | None = None) -> dict:
    """The measurement; returns the summary (the JSON line's keys first) and the details."""
    proc = None
    if url is None:
        port = free_port()
        proc = start_server(port, server_env(model), list(server_args))
        url, pids = f"http://127.0.0.1:{port}", [proc.pid]
    try:
        rss_start = sum(rss_mb(p) for p in pids)
        out = asyncio.run(drive(url, sessions, steps, interval, text, list(pids)))
    finally:
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
    lat = [x * 1000 for r in out["results"] for x in r["latencies"]]
    errors = [e for r in out["results"] for e in r["errors"]]
    loads = [r["load_s"] for r in out["results"] if r["load_s"] is not None]
    summary = {
        "sessions": sessions, "steps": len(lat),
        "p50_ms": round(statistics.median(lat)) if lat else None,
        "p95_ms": round(percentile(lat, 95)) if lat else None,
        "max_ms": round(max(lat)) if lat else None,
        "errors": len(errors),
        "server_rss_mb": round(out["rss_mb"], 1) if out["rss_mb"] is not None else None,
        "server_cpu_s": round(out["cpu_s"], 2) if out["cpu_s"] is not None else None,
    }
    details = {
        "steps_asked": sessions * steps, "interval_s": interval, "stepping_s": round(out["seconds"], 1),
        "cpu_ms_per_click": round(1000 * out["cpu_s"] / len(lat), 1) if lat and out["cpu_s"] is not None else None,
        "server_cores_busy": round(out["cpu_s"] / out["seconds"], 2) if out["cpu_s"] is not None else None,
        "first_load_p50_s": round(statistics.median(loads), 2) if loads else None,
        "first_load_max_s": round(max(loads), 2) if loads else None,
        "rss_start_mb": round(rss_start, 1) if pids else None,
        "rss_loaded_mb": round(out["rss_loaded_mb"], 1) if pids else None,
        "sessions_per_replica": dict(Counter(r["replica"] for r in out["results"] if r["replica"])),
        "load_average": os.getloadavg(), "server_args": list(server_args), "error_samples": errors[:5],
    }
    return {"summary": summary, "details": details}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20, help="Next clicks per session")
    parser.add_argument("--interval", type=float, default=2.0, help="seconds between a session's clicks")
    parser.add_argument("--text", default=TEXT, help="the sentence every session types ('' keeps the preset)")
    parser.add_argument("--url", help="drive a running server (or proxy) instead of starting one")
    parser.add_argument("--server-pid", type=int, action="append", default=[], help="with --url: pid(s) to measure")
    parser.add_argument("--server-arg", action="append", default=[], help="an option for `streamlit run`")
    parser.add_argument("--model", help="a checkpoint folder to serve (default: the shipped models, en-fr)")
    args = parser.parse_args()
    report = run(args.sessions, args.steps, args.interval, args.text or None, args.url, args.server_pid,
                 args.server_arg, args.model)
    print(json.dumps(report["details"]))
    print(json.dumps(report["summary"]))


if __name__ == "__main__":
    main()
