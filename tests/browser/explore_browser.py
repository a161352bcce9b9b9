"""What the Explore browser tests share: a Chromium page on a served app, labels cut or overlapping, the tour's
stops. The server itself is a fixture of tests/browser/conftest.py (`shipped_server`)."""

from __future__ import annotations

import contextlib

from harness.browser import ATTENTION, IDLE, browser_page

NEXT = "[data-testid=lens-stepper] .lens-next"  # the stepper's Next button (app/render/stepper)

# JS: texts of the labels in the main area's buttons that the browser shows cut (ellipsis or overflow).
CUT_LABELS = """() => [...document.querySelectorAll("[data-testid='stMain'] button")]
    .filter(b => b.offsetParent !== null)
    .flatMap(b => [b, ...b.querySelectorAll('*')])
    .filter(e => e.textContent.trim() && e.scrollWidth > e.clientWidth + 1)
    .map(e => e.textContent.trim())"""


@contextlib.contextmanager
def open_page(url: str, width: int, height: int, query: str = ""):
    """A fresh browser at width x height on the page, once Explore's stepper has drawn its picture."""
    with browser_page(url + query, width, height, device_scale_factor=1) as page:
        page.locator(f"{ATTENTION} canvas").first.wait_for(timeout=90_000)
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
