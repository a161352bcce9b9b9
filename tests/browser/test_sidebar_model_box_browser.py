"""The sidebar's model box at 1366 x 768 in Chromium (shipped models): the name each model is offered under fits
the box whole ("everyday-de-en · German → Engli" was cut); its description is on the card line under the box."""

from __future__ import annotations

import pytest

from harness.browser import IDLE, browser_page

pytestmark = [pytest.mark.browser]
# JS: the options' texts wider than the box's text area (measured with the box's own font), and the box's value
TOO_WIDE = """(names) => { const input = document.querySelector('[data-testid=stSidebar] .st-key-model input');
  const ctx = document.createElement('canvas').getContext('2d'); const css = getComputedStyle(input);
  ctx.font = `${css.fontWeight} ${css.fontSize} ${css.fontFamily}`;
  const room = input.clientWidth - parseFloat(css.paddingLeft) - parseFloat(css.paddingRight);
  return names.filter(n => ctx.measureText(n).width > room); }"""


def test_every_model_name_fits_the_box(shipped_server):
    with browser_page(shipped_server, 1366, 768, device_scale_factor=1) as page:
        box = page.locator("[data-testid=stSidebar] .st-key-model input")
        box.wait_for(timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        page.locator("[data-testid=stSidebar] .st-key-model button[aria-label=Open]").click()
        names = [o.strip() for o in page.get_by_role("option").all_inner_texts()]
        page.keyboard.press("Escape")
        assert len(names) >= 5, names
        assert page.evaluate(TOO_WIDE, names) == []
