"""The tour at 1366 x 768 in Chromium (shipped models): each Leakage lab stop scrolls the chart it speaks of
into view under its box (the copying diagonal, the broken models' loss curves, the diverging rows opened below
the fold); LENS_UPDATE_SCREENSHOT=1 writes every stop's screenshot to assets/."""

from __future__ import annotations

import os

import pytest

from tests.browser import explore_browser as eb
from tests.fixtures.checkpoints import ROOT
from tests.support.browser import browser_page

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
