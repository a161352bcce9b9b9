"""What the Explore browser tests share: a server on the shipped checkpoints and a Chromium page on it."""

from __future__ import annotations

import contextlib
import os

import pytest

from benchmarks.harness import ATTENTION, CHROMIUM, IDLE, browser_page, served
from tests.fixtures.checkpoints import shipped_checkpoint

# JS: texts of the labels in the main area's buttons that the browser shows cut (ellipsis or overflow).
CUT_LABELS = """() => [...document.querySelectorAll("[data-testid='stMain'] button")]
    .filter(b => b.offsetParent !== null)
    .flatMap(b => [b, ...b.querySelectorAll('*')])
    .filter(e => !e.closest('.st-key-stepbar button [data-testid=stMarkdownContainer]'))  // screen-reader names
    .filter(e => e.textContent.trim() && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.trim())"""


@pytest.fixture(scope="module")
def shipped_server():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    shipped_checkpoint("en-fr")
    # The grammar en-fr model (the tests' queries are its sentences); no warm-up thread (app/warmup.py).
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")} | {"LENS_DEFAULT_MODEL": "en-fr",
                                                                             "LENS_WARMUP": "0"}
    with served(env) as (url, _):
        yield url


@contextlib.contextmanager
def open_page(url: str, width: int, height: int, query: str = ""):
    """A fresh browser at width x height on the page, once its step bar is drawn."""
    with browser_page(url + query, width, height, device_scale_factor=1) as page:
        page.locator(".st-key-next button").wait_for(timeout=60_000)
        page.locator(ATTENTION).wait_for(timeout=60_000)
        yield page


def overlapping(labels: list[dict]) -> list[tuple[str, str]]:
    """Pairs of label boxes that overlap (by more than half a pixel each way)."""
    out = []
    for i, a in enumerate(labels):
        for b in labels[i + 1:]:
            if min(a["r"], b["r"]) - max(a["l"], b["l"]) > 0.5 and min(a["b"], b["b"]) - max(a["t"], b["t"]) > 0.5:
                out.append((a["text"], b["text"]))
    return out


def tour_stops(page, last: int):
    """Start Explore's tour and walk it to stop `last`: yields each stop's number once its text is shown and the
    page is idle, and clicks Next after each stop but the last."""
    page.locator(IDLE).wait_for(timeout=60_000)
    page.locator(".st-key-tour_start button").click()
    for stop in range(1, last + 1):
        page.get_by_text(f"Tour {stop}/").wait_for(timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        yield stop
        if stop < last:
            page.locator(".st-key-tour_next button").click()
