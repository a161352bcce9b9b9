"""A cached function's spinner at 1366 x 768 in Chromium: no line of the page shows beside its text. Streamlit draws
it over the page with no height and a box as wide as its text, so the line the previous script run drew there (the
Heads page's caption, "Switches each head off in turn over the first 200 pairs…") ran on right after the spinner's
"Switching every head off in turn…"."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import CHROMIUM, IDLE, launch

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (installed by .ci/run)"),
]

# JS: from now on, each time the page changes while a cached function's spinner is shown, record its text and the
# main area's text lines on the spinner text's own line that are not hidden under it (sampled along the line:
# the element the browser finds at a point is that line, not the spinner).
WATCH = """() => { window.lensSpinners = [];
  const look = () => {
    const spinner = document.querySelector('[data-testid=stMain] .stCacheSpinner');
    if (!spinner) return;
    const text = (spinner.querySelector('[role=status]') || spinner).getBoundingClientRect();
    const beside = [];
    for (const line of document.querySelectorAll('[data-testid=stMain] p')) {
      if (spinner.contains(line)) continue;
      const r = line.getBoundingClientRect();
      if (!r.width || r.bottom <= text.top || r.top >= text.bottom) continue;
      const y = (Math.max(r.top, text.top) + Math.min(r.bottom, text.bottom)) / 2;
      for (let x = r.left + 1; x < r.right; x += 6) {
        const hit = document.elementFromPoint(x, y);
        if (hit && line.contains(hit)) { beside.push({line: line.textContent.slice(0, 80), x}); break; }
      }
    }
    window.lensSpinners.push({text: spinner.textContent, beside});
  };
  new MutationObserver(look).observe(document.body, {subtree: true, childList: true, attributes: true}); }"""


RANKING = "Switching every head off in turn"  # the ranking's spinner (app/services.py head_ranking)


def test_the_heads_ranking_spinner_has_no_line_beside_it(shipped_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            # 200 test pairs: no other test ranks so many on this server, so the ranking is computed (not cached)
            # and its spinner is shown (Streamlit shows a cached function's spinner after 0.5 s)
            page.goto(shipped_server + "/Heads?model=en-fr&data=test&n=200")
            page.locator(".st-key-heads_rank button").wait_for(timeout=120_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            page.evaluate(WATCH)
            page.locator(".st-key-heads_rank button").click()
            page.wait_for_function(f"() => window.lensSpinners.some(s => s.text.includes({RANKING!r}))",
                                   timeout=300_000)
            seen = page.evaluate("() => window.lensSpinners")
        finally:
            browser.close()
    ranking = [s for s in seen if RANKING in s["text"]]
    beside = [s for s in ranking if s["beside"]]
    assert not beside, beside[:3]
