"""What the benchmarks measure with: the step-click loop (`time_next_clicks`, with `WebsocketBytes` to count what a
click costs on the wire), the figures every benchmark reports (`percentile`, `rss_mb`, `cpu_seconds`), and a server
of another checkout for old-against-new comparisons (`tree_env`, `explore_query`)."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from harness.browser import ROW_SHOWN
from harness.server import app_env

# CSS: the stepper's Next and First step buttons on Explore (app/render/stepper; they step in the page, no script run)
STEPPER_NEXT = "[data-testid=lens-stepper] .lens-next"
STEPPER_FIRST = "[data-testid=lens-stepper] .lens-first"


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
    """The step-click loop of a Playwright page on Explore that shows row 0 of its run: click the stepper's Next
    n times, each timed from the click until the stepper has drawn the new row (`ROW_SHOWN`); at the run's last
    step, First step (untimed) and go on from row 0. With `meter`, also the websocket bytes received per click;
    then the loop waits `settle_ms` before each click and after each draw so that late frames count for their
    click."""
    nxt, reset = page.locator(STEPPER_NEXT), page.locator(STEPPER_FIRST)
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


def tree_env(tree: Path, **extra: str) -> dict[str, str]:
    """The environment of a server of another checkout `tree` (a `git archive` tree with pkg/attention_lens of
    symlinks to its own app/ and model/, as compare_step_bench.checkout makes it): its package first on PYTHONPATH,
    so it imports its own code; the warm-up off."""
    env = app_env(LENS_WARMUP="0", **extra)
    env["PYTHONPATH"] = os.pathsep.join([str(tree / "pkg"), str(tree)])
    return env


def explore_query(text: str, model: str = "everyday-en-fr") -> str:
    """The address of Explore on `model` with `text`, greedy, grid of cross-attention, step 1 (a link any tree
    reads)."""
    from urllib.parse import quote

    return f"/?model={model}&text={quote(text)}&mode=greedy&view=grid&kind=cross&step=1"


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far (utime + stime from /proc), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
