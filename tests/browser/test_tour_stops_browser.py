"""The tour at 1366 x 768 in Chromium (shipped models): each Leakage lab stop scrolls the chart it speaks of
into view under its box (the copying diagonal, the broken models' loss curves, the diverging rows opened below
the fold); LENS_UPDATE_SCREENSHOT=1 writes every stop's screenshot to assets/."""

from __future__ import annotations

import os

import pytest

from harness.browser import browser_page
from tests.browser import explore_browser as eb
from tests.fixtures.checkpoints import ROOT

pytestmark = [pytest.mark.browser]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
ANCHORS = {5: ".st-key-leak_heatmap", 6: ".st-key-leak_curves", 7: ".st-key-exp_pair"}  # 7: the pair stepper


def test_every_leakage_lab_stop_shows_its_chart(shipped_server, tmp_path):
    out = ROOT / "assets" if UPDATE else tmp_path
    seen = {}
    with browser_page(shipped_server, 1366, 768, device_scale_factor=1) as page:
        for stop in eb.tour_stops(page, 8):
            page.wait_for_timeout(2500)  # the stop's one scroll, once its run is over
            page.screenshot(path=str(out / f"tour-stop-{stop}-1366.png"))
            if stop in ANCHORS:
                chart = page.locator(ANCHORS[stop])
                chart.wait_for(timeout=60_000)
                box = chart.bounding_box()
                seen[stop] = round(box["y"])
    assert all(0 <= y < 768 - 150 for y in seen.values()), seen  # each chart's top (and 150 px of it) on screen


def test_the_key_value_cache_stop_shows_its_panel_under_the_box_at_1366(shipped_server):
    """Tour stop 8 at 1366 x 768: the key-value cache panel it speaks of starts just under the sticky tour box, on
    screen (only the expander's header was on screen, and scrolled, the box covered the panel's first rows)."""
    from harness.browser import browser_page
    from tests.browser.explore_browser import tour_stops

    with browser_page(shipped_server, 1366, 768, device_scale_factor=1) as page:
        for _ in tour_stops(page, 8):
            pass
        page.locator(".st-key-kv_open table").first.wait_for(timeout=60_000)
        page.wait_for_function("""() => { const box = document.querySelector('.st-key-tour').getBoundingClientRect();
            const kv = document.querySelector('.st-key-kv_open').getBoundingClientRect();
            return kv.top >= box.bottom && kv.top < box.bottom + 40; }""", timeout=20_000)
