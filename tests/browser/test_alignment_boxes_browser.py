"""The Alignment page's method boxes at 1366 x 768 in Chromium (shipped en-fr): the Layer box shows its whole
value on opening (the mean over layers read "all (mean" cut)."""

from __future__ import annotations

import pytest

from tests.support.browser import IDLE, browser_page

pytestmark = [pytest.mark.browser]
CUT = """() => [...document.querySelectorAll('.st-key-align_layer input, .st-key-align_head input')]
    .filter(i => i.scrollWidth > i.clientWidth + 1).map(i => i.value)"""


def test_the_layer_and_head_boxes_show_their_values_whole(shipped_server):
    with browser_page(f"{shipped_server}/Alignment?model=en-fr", 1366, 768, device_scale_factor=1) as page:
        page.locator(".st-key-align_layer input").wait_for(timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        page.wait_for_timeout(500)
        assert page.locator(".st-key-align_layer input").input_value() != ""
        assert page.evaluate(CUT) == []
