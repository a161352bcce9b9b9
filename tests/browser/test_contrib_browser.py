"""The reading switch in Chromium (shipped en-fr model): the norm-weighted grid drawn beside the raw one, and the
source / prefix bar of the step shown (the Trace's source share, following the step); the picture
assets/contrib-norm-vs-raw.png (LENS_UPDATE_SCREENSHOT=1 writes it there)."""

from __future__ import annotations

import os

import pytest
from attention_lens.model.engine import DecodeOptions, load_engine

from harness.browser import DRAWN, IDLE
from harness.server import ROOT
from tests.browser.explore_browser import open_page
from tests.fixtures.checkpoints import shipped_checkpoint

pytestmark = [pytest.mark.browser]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
QUERY = "?text=the+black+cat+sat+on+the+mat+.&mode=greedy&step=5&kind=cross&view=grid"
SHARE = "[data-testid=lens-stepper] .lens-share"
SHARE_ERROR = 1e-4  # app/screens/explore/stepper.py rounds the source share to 4 decimals


def test_norm_weighted_grid_beside_the_raw_one(shipped_server, tmp_path):
    from PIL import Image

    trace = load_engine(shipped_checkpoint("en-fr")).trace(
        "the black cat sat on the mat .", options=DecodeOptions(mode="greedy", contributions=True))
    want = trace.contributions["source_share"]

    with open_page(shipped_server, 1366, 900, QUERY) as page:
        page.wait_for_timeout(800)
        raw_z = page.evaluate(DRAWN)
        raw_png = tmp_path / "raw.png"
        page.locator(".st-key-attention").screenshot(path=str(raw_png))
        page.locator(".st-key-reading button", has_text="Norm-weighted").click()
        page.wait_for_function(f"() => ({DRAWN})() !== {raw_z!r}", timeout=30_000)
        page.locator(SHARE).wait_for(timeout=30_000)  # the source / prefix bar of the step shown, step 5
        assert abs(float(page.locator(SHARE).get_attribute("data-source")) - want[4]) <= SHARE_ERROR
        page.locator(IDLE).wait_for(timeout=60_000)
        page.wait_for_timeout(800)
        norm_png = tmp_path / "norm.png"
        page.locator(".st-key-attention").screenshot(path=str(norm_png))
        page.locator("[data-testid=lens-stepper] .lens-next").click()  # the bar follows the step: step 6's share
        page.wait_for_function(f"() => Math.abs(Number(document.querySelector('{SHARE}').dataset.source)"
                               f" - {float(want[5])}) <= {SHARE_ERROR}", timeout=30_000)
    left, right = Image.open(raw_png), Image.open(norm_png)
    both = Image.new("RGB", (left.width + right.width + 20, max(left.height, right.height)), "white")
    both.paste(left, (0, 0))
    both.paste(right, (left.width + 20, 0))
    out = ROOT / "assets" / "contrib-norm-vs-raw.png" if UPDATE else tmp_path / "both.png"
    both.save(out)
    assert out.stat().st_size > 20_000
