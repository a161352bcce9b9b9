"""In Chromium on the shipped en-fr model: the one-head picture fills its column and no two tick labels
overlap (5-, 15- and 30-token sentences, 1366 x 768 and 1920 x 1080, normal and presenter mode); keyboard
stepping survives clicks on toggles; a link copied from "Copy link" reproduces a reading, a forced token and a
switched-off head in a new browser; Heads opens the clicked head on a first visit."""

from __future__ import annotations

from urllib.parse import quote

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from harness.browser import ATTENTION, CHIPS, DRAWN, IDLE, ROW_SHOWN, launch
from tests.browser import explore_browser as eb
from tests.browser.explore_browser import open_page, overlapping

pytestmark = [pytest.mark.browser]

SENTENCES = {5: "the cat sat .", 15: "the black cat sat on the mat near the bank of the river .",
             30: "the dog sat near the bank of the river . the black cat sat on the mat . the man found the bank . "
                 "the cat sat ."}  # 5, 15 and 29 source tokens (the end token counted)
# JS: the one-head map's width (its drawn cells), the width of the stepper's picture column it sits in (the step's
# words beside it), and the boxes of its row and column labels ("3 ▁chat") as the screen shows them: each label's
# text clipped to its own box, shown ones only (not hidden, not a column left unlabelled for room).
MEASURE = """() => {
  const stepper = document.querySelector('.st-key-attention [data-testid=lens-stepper]');
  const column = stepper.querySelector('.lens-left');
  const cells = stepper.querySelector('.lens-picture .lens-cells').getBoundingClientRect();
  const labels = [...stepper.querySelectorAll('.lens-picture .lens-q, .lens-picture .lens-k')].filter(e => {
      const st = getComputedStyle(e);
      return st.display !== 'none' && st.visibility !== 'hidden' && !e.classList.contains('thin'); })
    .map(e => { const box = e.getBoundingClientRect(); const range = document.createRange();
      range.selectNodeContents(e); const ink = range.getBoundingClientRect();
      return {text: e.textContent, l: Math.max(box.left, ink.left), t: Math.max(box.top, ink.top),
              r: Math.min(box.right, ink.right), b: Math.min(box.bottom, ink.bottom)}; })
    .filter(b => b.r - b.l > 0 && b.b - b.t > 0);
  return {map: cells.width, column: column.getBoundingClientRect().width, labels}; }"""


LAST_STEP_SHOWN = """() => { const el = document.querySelector('[data-testid=lens-stepper]');
    return !!el && !!el.dataset.m && el.dataset.step === el.dataset.m && !!el.querySelector('canvas'); }"""


@pytest.mark.parametrize("present", [False, True], ids=["normal", "presenter"])
@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)], ids=["1366", "1920"])
def test_one_head_fills_its_column_and_no_tick_labels_overlap(shipped_server, size, present):
    problems = []  # every sentence measured before the test fails, so its message names them all
    for n, text in SENTENCES.items():
        query = (f"/?text={quote(text)}&mode=greedy&kind=cross&view=head&layer=1&head=1&step=99"
                 + ("&present=1" if present else ""))
        with open_page(shipped_server, *size, query=query) as page:
            page.locator(IDLE).wait_for(timeout=60_000)
            page.wait_for_function(LAST_STEP_SHOWN, timeout=60_000)  # step=99: the run's last step
            got = page.evaluate(MEASURE)
            print(size, "present" if present else "normal", n, round(got["map"]), round(got["column"]),
                  len(got["labels"]))
            if got["map"] < 0.6 * got["column"]:
                problems.append((n, "narrow", round(got["map"]), round(got["column"])))
            if len(got["labels"]) < 2:
                problems.append((n, "unlabelled", len(got["labels"])))
            if overlapping(got["labels"]):
                problems.append((n, "overlap", overlapping(got["labels"])[:5]))
    assert not problems, problems


def test_keyboard_stepping_survives_clicks_on_toggles(shipped_server):
    """Arrow keys still step after a click on a toggle (with the previous key listener, after the click on
    "Decoder" ArrowRight did not step: row 1 was never drawn)."""
    with open_page(shipped_server, 1366, 768, query="/?text=the%20black%20cat%20sat%20.&step=1") as page:
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=60_000)
        page.locator("[data-testid=lens-stepper] .lens-kinds button", has_text="Decoder").click()
        page.wait_for_function("() => location.search.includes('kind=dec')", timeout=60_000)  # switched in the page
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
        page.locator(IDLE).wait_for(timeout=60_000)
        page.get_by_text("Force another token at this step").click()  # its box is drawn once it is opened
        box = page.locator(".st-key-force_choice input")  # type a word outside the top candidates
        box.wait_for(timeout=60_000)
        chien = page.get_by_role("option", name="▁chien", exact=True)
        for _ in range(4):  # a late rerun (the click's step sync) redraws the box and drops what was typed: again
            page.locator(IDLE).wait_for(timeout=60_000)
            box.click()
            box.fill("▁chien")
            try:
                chien.wait_for(timeout=15_000)
                break
            except PlaywrightTimeout:
                continue
        chien.click(timeout=60_000)
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
            page.locator(f"{ATTENTION} canvas").first.wait_for(timeout=60_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            page.wait_for_function("() => location.search.includes('view=head')", timeout=30_000)
            query = page.evaluate("() => location.search")
            assert "kind=dec" in query and "layer=3" in query and "head=2" in query, query
            label = page.locator(ATTENTION).get_attribute("aria-label")  # the picture's description
            assert label.startswith("Decoder self-attention · layer 3 · head 2:"), label
        finally:
            browser.close()


# JS: where the tour's box and the map's drawn rows (every panel's cells) are on the screen (viewport px), and
# the bottom of the picture's own box (a one-row view scrolls inside it: a row below it is not on the screen).
TOUR_SEEN = """() => { const box = document.querySelector('.st-key-tour').getBoundingClientRect();
  const picture = document.querySelector('.st-key-attention [data-testid=lens-stepper] .lens-picture');
  const cells = [...picture.querySelectorAll('.lens-cells')].map(c => c.getBoundingClientRect())
    .filter(r => r.width > 2 && r.height > 2);
  return {box_top: box.top, box_bottom: box.bottom, top: Math.min(...cells.map(c => c.top)),
          bottom: Math.max(...cells.map(c => c.bottom)), picture_bottom: picture.getBoundingClientRect().bottom,
          height: innerHeight}; }"""


def test_each_tour_stop_on_explore_shows_its_picture_with_its_text_at_1366(shipped_server):
    """Stop 4 (the causal mask, teacher forcing: one more input row) drew its map mostly below the fold."""
    with open_page(shipped_server, 1366, 768) as page:
        for stop in eb.tour_stops(page, 4):
            page.wait_for_timeout(500)  # the scroll runs once the page is idle
            seen = page.evaluate(TOUR_SEEN)
            for _ in range(40):  # on a loaded machine the smooth scroll may still be running: wait until it settles
                page.wait_for_timeout(250)
                now, seen = seen, page.evaluate(TOUR_SEEN)
                if now == seen:
                    break
            print(stop, seen)
            assert seen["box_top"] >= 0 and seen["box_bottom"] <= seen["top"], (stop, seen)  # text above, not over
            assert seen["bottom"] <= seen["height"], (stop, seen)  # every row of the map on the screen
            assert seen["bottom"] <= seen["picture_bottom"] + 1, (stop, seen)  # not scrolled out of the picture


# JS: the attention picture's panels, each one's drawn cells' width and height in px (the rows drawn so far; the
# columns of the keys this step may see: decoder self-attention at step 1 draws one cell, the rest left blank).
PANELS = """() => [...document.querySelectorAll('.st-key-attention [data-testid=lens-stepper] .lens-panel')]
  .map(p => { const r = p.querySelector('.lens-cells').getBoundingClientRect();
    const keys = p.querySelectorAll('.lens-k'), seen = p.querySelectorAll('.lens-k:not(.hidden)');
    return {w: r.width * seen.length / keys.length, h: r.height}; })"""


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
