"""In Chromium on the shipped en-fr model: the one-head picture fills its column and no two tick labels
overlap (5-, 15- and 30-token sentences, 1366 x 768 and 1920 x 1080, normal and presenter mode); keyboard
stepping survives clicks on toggles; a link copied from "Copy link" reproduces a reading, a forced token and a
switched-off head in a new browser; Heads opens the clicked head on a first visit."""

from __future__ import annotations

from urllib.parse import quote

import pytest

from tests.browser import explore_browser as eb
from tests.browser.explore_browser import open_page, overlapping
from tests.support.browser import CHIPS, DRAWN, IDLE, ROW_SHOWN, launch

pytestmark = [pytest.mark.browser]

SENTENCES = {5: "the cat sat .", 15: "the black cat sat on the mat near the bank of the river .",
             30: "the dog sat near the bank of the river . the black cat sat on the mat . the man found the bank . "
                 "the cat sat ."}  # 5, 15 and 29 source tokens (the end token counted)
# JS: the one-head map's width (the union of its cells: the chart's visible filled paths that are neither the colour
# bar's gradient nor a line), the width of the column it sits in, and the boxes of its tick labels (texts that start
# with a position, "3 ▁chat"), visible ones only.
MEASURE = """() => {
  const chart = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
  const column = chart.closest('[data-testid=stColumn]');
  const cells = [...chart.querySelectorAll('svg path')].filter(p => {
    const f = p.getAttribute('fill') || ''; const r = p.getBoundingClientRect();
    return f && f !== 'none' && f !== 'transparent' && !f.startsWith('url') && r.width > 2 && r.height > 2
      && Number(p.getAttribute('fill-opacity') ?? 1) > 0; });  // not the invisible hit boxes of titles and legend
  const left = Math.min(...cells.map(c => c.getBoundingClientRect().left));
  const right = Math.max(...cells.map(c => c.getBoundingClientRect().right));
  const labels = [...chart.querySelectorAll('svg text')].filter(t => /^\\d+ /.test(t.textContent)
      && getComputedStyle(t).display !== 'none' && Number(t.getAttribute('opacity') ?? 1) > 0)
    .map(t => { const r = t.getBoundingClientRect();
      return {text: t.textContent, l: r.left, t: r.top, r: r.right, b: r.bottom}; })
    .filter(b => b.r - b.l > 0);
  return {map: right - left, column: column.getBoundingClientRect().width, cells: cells.length, labels}; }"""


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_one_head_fills_its_column_and_no_tick_labels_overlap(shipped_server, size, present):
    for n, text in SENTENCES.items():
        query = (f"/?text={quote(text)}&mode=greedy&kind=cross&view=head&layer=1&head=1&step=99"
                 + ("&present=1" if present else ""))
        with open_page(shipped_server, *size, query=query) as page:
            page.locator(IDLE).wait_for(timeout=60_000)
            page.wait_for_function("""() => { const el = document.querySelector(
                '.st-key-attention [data-testid=stEChartsChart]'); return el && el.querySelector('svg path'); }""",
                                   timeout=60_000)
            got = page.evaluate(MEASURE)
            print(size, "present" if present else "normal", n, round(got["map"]), round(got["column"]),
                  len(got["labels"]))
            assert got["map"] >= 0.6 * got["column"], (n, got["map"], got["column"])
            assert len(got["labels"]) >= 2, n
            assert not overlapping(got["labels"]), (n, overlapping(got["labels"])[:5])


def test_keyboard_stepping_survives_clicks_on_toggles(shipped_server):
    """Arrow keys still step after a click on a toggle (with the previous key listener, after the click on
    "Decoder" ArrowRight did not step: row 1 was never drawn)."""
    with open_page(shipped_server, 1366, 768, query="/?text=the%20black%20cat%20sat%20.&step=1") as page:
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=60_000)
        page.locator(".st-key-kind button", has_text="Decoder").click()
        page.wait_for_function("() => location.search.includes('kind=dec')", timeout=60_000)  # its rerun is done
        page.locator(IDLE).wait_for(timeout=60_000)
        page.keyboard.press("ArrowRight")
        page.wait_for_function(ROW_SHOWN, arg=[1], timeout=30_000)
        page.locator(".st-key-present label").click()  # the Present toggle keeps the focus on its checkbox
        page.wait_for_function("() => location.search.includes('present=1')", timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        assert page.evaluate("() => document.activeElement.getAttribute('role')") == "switch"
        page.keyboard.press("ArrowRight")
        page.wait_for_function(ROW_SHOWN, arg=[2], timeout=30_000)
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(ROW_SHOWN, arg=[1], timeout=30_000)


def test_a_copied_link_reproduces_reading_forced_token_and_heads_off(shipped_server):
    from playwright.sync_api import sync_playwright

    with open_page(shipped_server, 1366, 768, query="/?text=the%20cat%20sat%20.&step=2&view=head") as page:
        page.wait_for_function(ROW_SHOWN, arg=[1], timeout=60_000)
        box = page.locator(".st-key-force_choice input")  # type a word outside the top candidates
        box.click()
        box.fill("▁chien")
        page.get_by_role("option", name="▁chien", exact=True).click()
        page.locator(".st-key-force button").click()
        page.locator(IDLE).wait_for(timeout=60_000)
        page.locator(".st-key-reading button", has_text="Rollout").click()
        page.locator(IDLE).wait_for(timeout=60_000)
        page.get_by_role("button", name="Switch this head off").click()  # (its tooltip draws a hidden twin)
        page.locator(".st-key-ablation").wait_for(timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        tokens = page.locator(CHIPS).all_inner_texts()
        picture = page.evaluate(DRAWN)
        page.get_by_text("Copy link").click()
        link = page.locator("[data-testid=stPopoverBody] code").inner_text().strip()
        assert "reading=rollout" in link and "off=cross%3A1%3A1" in link and "forced=" in link
        assert "chien" in " ".join(tokens)
    with sync_playwright() as p:
        browser = launch(p)
        try:
            fresh = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            fresh.goto(link)
            fresh.locator(".st-key-ablation").wait_for(timeout=60_000)
            fresh.locator(IDLE).wait_for(timeout=60_000)
            fresh.wait_for_function("([sel, n]) => document.querySelectorAll(sel).length >= n",  # drawn after the
                                    arg=[CHIPS, len(tokens)], timeout=30_000)  # ablation panel's container
            fresh.locator(IDLE).wait_for(timeout=60_000)
            assert fresh.locator(CHIPS).all_inner_texts() == tokens
            assert "cross:1:1" in fresh.locator(".st-key-ablation").inner_text()
            fresh.wait_for_function(f"() => ({DRAWN})() === {picture!r}", timeout=30_000)
        finally:
            browser.close()


def test_heads_opens_exactly_the_clicked_head_on_a_first_visit(shipped_server):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(shipped_server + "/Heads?model=en-fr&data=file")  # two pairs of your own: ranked in seconds
            page.locator("[data-testid=stFileUploaderDropzoneInput]").set_input_files(files=[{
                "name": "pairs.tsv", "mimeType": "text/tab-separated-values",
                "buffer": b"the cat sat .\tle chat s' assit .\nthe black dog sat .\tle chien noir s' assit .\n"}])
            page.locator(".st-key-heads_rank button").click()
            page.locator(".st-key-open_dec_3_2 button").wait_for(timeout=120_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            page.locator(".st-key-open_dec_3_2 button").click()
            page.locator(".st-key-attention [data-testid=stEChartsChart]").wait_for(timeout=60_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            page.wait_for_function("() => location.search.includes('view=head')", timeout=30_000)
            query = page.evaluate("() => location.search")
            assert "kind=dec" in query and "layer=3" in query and "head=2" in query, query
            label = page.locator(".st-key-attention [data-testid=stEChartsChart]").get_attribute("aria-label")
            assert "layer 3 · head 2" in label, label
        finally:
            browser.close()


# JS: where the tour's box and the one-head map's cells are on the screen (viewport px).
TOUR_SEEN = """() => { const box = document.querySelector('.st-key-tour').getBoundingClientRect();
  const chart = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
  const cells = [...chart.querySelectorAll('svg path')].filter(p => (p.getAttribute('fill') || '').startsWith('rgb(')
    && Number(p.getAttribute('fill-opacity') ?? 1) > 0 && p.getBoundingClientRect().width > 2)
    .map(p => p.getBoundingClientRect());
  return {box_top: box.top, box_bottom: box.bottom, top: Math.min(...cells.map(c => c.top)),
          bottom: Math.max(...cells.map(c => c.bottom)), height: innerHeight}; }"""


def test_each_tour_stop_on_explore_shows_its_picture_with_its_text_at_1366(shipped_server):
    """Stop 4 (the causal mask, teacher forcing: one more input row) drew its map mostly below the fold."""
    with open_page(shipped_server, 1366, 768) as page:
        for stop in eb.tour_stops(page, 4):
            page.wait_for_timeout(500)  # the scroll runs once the page is idle
            seen = page.evaluate(TOUR_SEEN)
            print(stop, seen)
            assert seen["box_top"] >= 0 and seen["box_bottom"] <= seen["top"], (stop, seen)  # text above, not over
            assert seen["bottom"] <= seen["height"], (stop, seen)  # every row of the map on the screen


# JS: the attention chart's panels (its cells, grouped where a gap of more than 4 px parts them from left to right):
# each panel's width and height in px.
PANELS = """() => {
  const chart = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
  const cells = [...chart.querySelectorAll('svg path')].filter(p => (p.getAttribute('fill') || '').startsWith('rgb(')
    && Number(p.getAttribute('fill-opacity') ?? 1) > 0 && p.getBoundingClientRect().width > 2)
    .map(p => p.getBoundingClientRect()).sort((a, b) => a.left - b.left);
  const panels = [];
  for (const c of cells) {
    const p = panels[panels.length - 1];
    if (p && c.left <= p.right + 4) { p.right = Math.max(p.right, c.right); p.top = Math.min(p.top, c.top);
      p.bottom = Math.max(p.bottom, c.bottom); }
    else panels.push({left: c.left, right: c.right, top: c.top, bottom: c.bottom});
  }
  return panels.map(p => ({w: p.right - p.left, h: p.bottom - p.top})); }"""


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_a_one_row_mean_view_reads_as_a_picture(shipped_server, size):
    """Step 1's maps have one row: the mean view's panels were 280 x 72 px strips at 1920 x 1080 (decoder
    self-attention: one cell). Each panel is now at least 0.4 of its width tall."""
    for kind in ("cross", "dec"):
        query = f"/?text=the%20black%20cat%20sat%20.&mode=greedy&kind={kind}&view=mean&step=1"
        with open_page(shipped_server, *size, query=query) as page:
            page.wait_for_function(ROW_SHOWN, arg=[0], timeout=60_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            panels = page.evaluate(PANELS)
            print(size, kind, [(round(p["w"]), round(p["h"])) for p in panels])
            assert len(panels) == 3, panels  # en-fr: one panel a decoder layer
            for p in panels:
                assert p["h"] >= 0.4 * p["w"], (kind, panels)
