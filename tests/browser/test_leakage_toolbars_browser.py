"""The Leakage lab in Chromium at 1366 x 768 (shipped en-fr): with the pointer on a chart, no chart toolbar lies
over a title of that chart (the plotly toolbar covered the panel titles of the heatmaps and the curves)."""

from __future__ import annotations

import pytest

from harness.browser import IDLE, browser_page

pytestmark = [pytest.mark.browser]
# (training vs inference's two pictures are a stepper component now, no plotly toolbar: its probability lines are)
VIEWS = {"switches": ["leak_heatmap"], "broken": ["leak_curves"], "exposure": ["exp_probs"]}
# JS: boxes of the chart's toolbar buttons that overlap one of its titles (figure title, subplot titles).
COVERED = """(key) => {
  const plot = document.querySelector(`.st-key-${key} .js-plotly-plot`);
  if (!plot) return ['no chart'];
  const bar = [...plot.querySelectorAll('.modebar-btn')].map(b => b.getBoundingClientRect()).filter(r => r.width);
  const titles = [...plot.querySelectorAll('.gtitle, .annotation-text')].filter(t => t.textContent.trim());
  const out = [];
  for (const t of titles) { const r = t.getBoundingClientRect();
    for (const b of bar) if (Math.min(r.right, b.right) - Math.max(r.left, b.left) > 0.5
                          && Math.min(r.bottom, b.bottom) - Math.max(r.top, b.top) > 0.5) out.push(t.textContent); }
  return out;
}"""


@pytest.mark.parametrize("view", list(VIEWS))
def test_no_toolbar_over_a_title(shipped_server, view):
    with browser_page(f"{shipped_server}/Leakage_lab?model=en-fr&view={view}&causal=0&shift=0", 1366, 768,
                      device_scale_factor=1) as page:
        for key in VIEWS[view]:
            chart = page.locator(f".st-key-{key} .js-plotly-plot")
            chart.wait_for(timeout=180_000)
            page.locator(IDLE).wait_for(timeout=180_000)
            chart.scroll_into_view_if_needed()
            chart.hover()
            page.wait_for_timeout(500)
            covered = page.evaluate(COVERED, key)
            assert covered == [], (key, covered)
