"""The Compare page in Chromium on the shipped everyday model (the app's default) at 1366 x 768 and 1920 x 1080:
the attention kind switch shows its three titles whole, none under the layer and head boxes, and the default
example draws the difference (LENS_UPDATE_SCREENSHOT=1 writes the 1366 screenshot to assets/)."""

from __future__ import annotations

import os

import pytest

from harness.browser import IDLE, PAIR_DIFF, PAIR_SIDE, browser_page
from harness.server import ROOT, app_env
from tests.fixtures.checkpoints import shipped_checkpoint

pytestmark = [pytest.mark.browser]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
# JS: each kind button's title, whether the browser shows it cut, and whether it lies under another control.
KIND_BUTTONS = """() => {
  const boxes = [...document.querySelectorAll('.st-key-cmp_layer, .st-key-cmp_head, .st-key-cmp_pair .lens-bar')]
      .map(e => e.getBoundingClientRect());
  return [...document.querySelectorAll('.st-key-cmp_kind button')].map(b => {
    const r = b.getBoundingClientRect();
    const cut = [b, ...b.querySelectorAll('*')].some(e => e.scrollWidth > e.clientWidth + 1)
        || b.scrollWidth > r.width + 1;
    const under = boxes.some(o => Math.min(r.right, o.right) - Math.max(r.left, o.left) > 0.5
                                 && Math.min(r.bottom, o.bottom) - Math.max(r.top, o.top) > 0.5);
    const hidden = r.right > document.documentElement.clientWidth || r.width < 1;
    return {text: b.textContent.trim(), cut, under, hidden};
  });
}"""


@pytest.fixture(scope="module")
def server(app_server):
    shipped_checkpoint("everyday-en-fr")
    return app_server(app_env(LENS_WARMUP="0"))


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_the_kind_switch_is_whole_and_the_difference_drawn(server, size, tmp_path):
    with browser_page(f"{server}/Compare", *size, device_scale_factor=1) as page:
        page.locator(".st-key-cmp_kind button").first.wait_for(timeout=120_000)
        page.locator(f"{PAIR_SIDE} canvas").first.wait_for(state="attached", timeout=120_000)
        page.locator(IDLE).wait_for(timeout=120_000)
        page.wait_for_timeout(600)
        buttons = page.evaluate(KIND_BUTTONS)
        assert [b["text"] for b in buttons] == ["Cross-attention", "Decoder self-attention",
                                                "Encoder self-attention"], buttons
        assert not [b for b in buttons if b["cut"] or b["under"] or b["hidden"]], buttons
        assert page.locator(f"{PAIR_DIFF} canvas").count() == 1  # A − B, drawn by the pair stepper
        if size == (1366, 768):
            page.screenshot(path=str((ROOT / "assets" if UPDATE else tmp_path) / "compare-everyday-1366.png"))
