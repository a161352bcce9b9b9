"""What the benchmarks and the browser tests share: serving the app, driving it in Debian's Chromium, and the
small measurements every benchmark reports (nearest-rank percentiles, a process's CPU seconds and resident
memory).

Imported as `benchmarks.harness`: benchmarks run as modules from the project root (`python -m benchmarks.NAME`),
and pytest puts the root on the import path (`pythonpath` in pyproject.toml).

- the page: CSS selectors and JS predicates that say what Explore shows (`ATTENTION`, `ROW_SHOWN`, `DRAWN`,
  `CHIPS`, `SOURCE_SHOWN`, `IDLE`);
- a server: `free_port`, `app_env`, `serve` / `wait_healthy` / `stop`, and `served` (start and stop around a
  `with` block);
- a browser: `CHROMIUM`, `LAUNCH_ARGS`, `launch`, `browser_page`, `WebsocketBytes`, and `time_next_clicks` (the
  step-click loop);
- figures: `percentile`, `rss_mb`, `cpu_seconds`.
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run"]

# ---- the page ------------------------------------------------------------------------------------------------------
# CSS: Explore's attention picture (an ECharts chart, app/render/echarts.py).
ATTENTION = ".st-key-attention [data-testid=stEChartsChart]"
# JS: the attention chart has drawn exactly rows 0..index (reads the chart's description, which ECharts writes as
# its aria label once it has rendered the option: "... 3 queries by 8 keys. Last query: 2 ▁chat → ...").
ROW_SHOWN = """([index]) => { const el = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    if (!el || el.getAttribute('aria-busy') !== 'false' || !el.querySelector('svg, canvas')) return false;
    return (el.getAttribute('aria-label') || '').includes('Last query: ' + index + ' '); }"""
# JS: a fingerprint of what the attention chart shows (its SVG, or its canvases' pixels), to see the picture change.
DRAWN = """() => { const el = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    if (!el) return ''; const svg = el.querySelector('svg');
    const d = svg ? svg.outerHTML : [...el.querySelectorAll('canvas')].map(c => c.toDataURL()).join('|');
    let h = 0; for (let i = 0; i < d.length; i++) h = (h * 31 + d.charCodeAt(i)) | 0; return String(h); }"""
CHIPS = ".st-key-prefix .lens-chip"
# JS: the encoder's tokens, joined without word marks, contain this text (the new sentence has been run).
SOURCE_SHOWN = """([text]) => { const el = document.querySelector('.st-key-tokens');
    return !!el && el.textContent.replace(/[\\s\u2581]/g, '').includes(text); }"""
# CSS: Streamlit's own marker of an idle page (the script run has finished; an action during a rerun can land on
# a stale button, and a picture taken then shows the previous elements greyed out).
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"


# ---- a server ------------------------------------------------------------------------------------------------------
def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def app_env(model: str | Path | None = None, **extra: str) -> dict[str, str]:
    """This process's environment without its LENS_ settings, so a server sees only the shipped models; with
    `model`, that folder is the one model it lists and opens. `extra` adds variables (e.g. LENS_HF_MODELS)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    if model is not None:
        path = str(Path(model).resolve())
        env.update(LENS_MODEL_DIRS=path, LENS_DEFAULT_MODEL=path)
    env.update(extra)
    return env


def serve(env: Mapping[str, str], port: int, tree: Path = ROOT, extra: Sequence[str] = (),
          seconds: float = 90) -> subprocess.Popen:
    """`streamlit run` of `tree`'s app on 127.0.0.1:port (headless, no file watcher), returned once healthy."""
    cmd = [sys.executable, "-m", "streamlit", "run", str(Path(tree) / "app" / "streamlit_app.py"),
           "--server.headless", "true", "--server.port", str(port), "--server.address", "127.0.0.1",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none", *extra]
    proc = subprocess.Popen(cmd, cwd=tree, env=dict(env), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_healthy(f"http://127.0.0.1:{port}", proc, seconds)
    except BaseException:
        stop(proc)
        raise
    return proc


def wait_healthy(url: str, proc: subprocess.Popen | None = None, seconds: float = 90) -> None:
    """Wait until `url`'s /_stcore/health answers 200; raise if `proc` exits first or `seconds` pass."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"server exited: {proc.stderr.read().decode()[-2000:] if proc.stderr else ''}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.3)
    raise RuntimeError(f"{url} did not become healthy within {seconds:.0f} s")


def stop(proc: subprocess.Popen, timeout: float = 15) -> None:
    """Terminate a server and wait for it; kill it if it does not exit within `timeout` seconds."""
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


@contextlib.contextmanager
def served(env: Mapping[str, str], tree: Path = ROOT, extra: Sequence[str] = (),
           seconds: float = 90) -> Iterator[tuple[str, subprocess.Popen]]:
    """A healthy server on a free port for the `with` block: yields (its URL, its process), stops it after."""
    port = free_port()
    proc = serve(env, port, tree, extra, seconds)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        stop(proc)


# ---- a browser -----------------------------------------------------------------------------------------------------
def launch(playwright):
    """Debian's Chromium with the project's flags, from a sync or async Playwright (await the result of the
    latter)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


@contextlib.contextmanager
def browser_page(url: str, width: int = 1500, height: int = 1400, **page_args) -> Iterator:
    """A fresh Chromium page (sync Playwright) of width x height px opened on `url`; the browser is closed when
    the `with` block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, **page_args)
            page.goto(url)
            yield page
        finally:
            browser.close()


@dataclass
class WebsocketBytes:
    """Bytes of the websocket frames a page has received since `attach`."""

    total: int = 0

    def attach(self, page) -> WebsocketBytes:
        page.on("websocket", lambda ws: ws.on("framereceived", self._add))
        return self

    def _add(self, data: bytes | str) -> None:
        self.total += len(data if isinstance(data, bytes) else data.encode())


@dataclass
class Clicks:
    """What `time_next_clicks` measured, one entry a click."""

    seconds: list[float] = field(default_factory=list)
    bytes: list[int] = field(default_factory=list)


def time_next_clicks(page, n: int, *, meter: WebsocketBytes | None = None, settle_ms: int = 0,
                     timeout_ms: int = 120_000) -> Clicks:
    """The step-click loop of a Playwright page on Explore that shows row 0 of its run: click Next n times, each
    timed from the click until the attention chart has drawn the new row (`ROW_SHOWN`); at the run's last step,
    Reset (untimed) and go on from row 0. With `meter`, also the websocket bytes received per click; then the
    loop waits `settle_ms` before each click and after each draw so that late frames count for their click."""
    nxt, reset = page.locator(".st-key-next button"), page.locator(".st-key-reset button")
    out = Clicks()
    step = 1
    while len(out.seconds) < n:
        if nxt.is_disabled():
            reset.click()
            page.wait_for_function(ROW_SHOWN, arg=[0], timeout=timeout_ms)
            step = 1
        if settle_ms:
            page.wait_for_timeout(settle_ms)
        before, t0 = (meter.total if meter else 0), time.perf_counter()
        nxt.click()
        page.wait_for_function(ROW_SHOWN, arg=[step], timeout=timeout_ms)
        out.seconds.append(time.perf_counter() - t0)
        if settle_ms:
            page.wait_for_timeout(settle_ms)
        if meter:
            out.bytes.append(meter.total - before)
        step += 1
    return out


# ---- figures -------------------------------------------------------------------------------------------------------
def percentile(values: Sequence[float], q: float) -> float:
    """Nearest-rank percentile, q in 0..100: the smallest value with at least q% of the values at or below it."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 100))  # ceil(n * q / 100), at least 1
    return ordered[int(rank) - 1]


def rss_mb(pid: int) -> float:
    """Resident memory of a process (VmRSS from /proc), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far (utime + stime from /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
