"""A link reproduces the page on the pages besides Explore (Explore's "Copy link" is in
test_picture_browser.py): a state made by clicks on the Leakage lab, Alignment and Heads, its address (these pages
write their state into it: app/screens/page_url.py) opened in a new browser context, shows the same state and the
same results. The AppTests of tests/app/shared/test_page_links.py read the links; these check the address a visitor
would copy."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from harness.browser import IDLE, launch
from tests.browser import explore_browser as eb

pytestmark = [pytest.mark.browser]

# JS: what the main area shows, as text (the page's numbers, tables, chart labels, widget values), and its drawn
# SVG (Alignment's pictures are SVG of our own, written the same way for the same state)
SHOWN = """() => { const main = document.querySelector('[data-testid=stMain]');
  const svg = [...main.querySelectorAll('.lens-svg')].map(e => e.innerHTML).join('|');
  let h = 0; for (let i = 0; i < svg.length; i++) h = (h * 31 + svg.charCodeAt(i)) | 0;
  return {text: main.innerText, svg: h}; }"""


def settle(page) -> None:
    page.locator(IDLE).wait_for(timeout=120_000)
    page.wait_for_timeout(300)
    page.locator(IDLE).wait_for(timeout=120_000)


def pick(page, key: str, option: str) -> None:
    """Choose `option` in the select box with this key."""
    page.locator(f".st-key-{key} input[role=combobox]").click()
    page.get_by_role("option", name=option, exact=True).click()
    settle(page)


def reopened(link: str, ready: str):
    """The link in a new browser (a new context: no cookie, no session), once `ready` is drawn: what it shows."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_context(viewport={"width": 1366, "height": 768}).new_page()
            page.goto(link)
            page.locator(ready).first.wait_for(timeout=120_000)
            settle(page)
            return page.evaluate(SHOWN), page.evaluate("() => location.href")
        finally:
            browser.close()


def open_from_explore(page, name: str, ready: str) -> dict:
    """From Explore, the sidebar's link to page `name`, once `ready` is drawn and the page idle: what it shows."""
    page.get_by_role("link", name=name).click()
    page.locator(ready).first.wait_for(timeout=120_000)
    settle(page)
    return page.evaluate(SHOWN)


def shown_and_link(page) -> tuple[dict, str]:
    """What the page shows and its address, once it has settled after the last click."""
    settle(page)
    return page.evaluate(SHOWN), page.evaluate("() => location.href")


def assert_reopens_the_same(link: str, ready: str, shown: dict) -> None:
    """The link in a new browser shows `shown`, and the page writes back exactly what the link said."""
    again, opened_at = reopened(link, ready)
    assert opened_at == link
    assert again == shown


@pytest.mark.parametrize("name", ["Leakage lab", "Alignment", "Heads"])
def test_moving_to_another_page_keeps_the_model_and_sentence(shipped_server, name):
    """Explore on the grammar en-fr (not the first model of the list) with a sentence of its own, then the page's
    link in the sidebar: Streamlit drew the model box there with its first option, everyday-en-fr, and the
    page swapped model and sentence."""
    query = "/?model=en-fr&text=the%20black%20cat%20sat%20.&mode=teacher_forced&target=le%20chat%20noir%20s%27%20assit%20."  # noqa: E501
    with eb.open_page(shipped_server, 1366, 768, query) as page:
        settle(page)
        page.get_by_role("link", name=name).click()
        page.wait_for_function(f"() => location.pathname.endsWith({name.replace(' ', '_')!r})", timeout=60_000)
        settle(page)
        params = page.evaluate("() => Object.fromEntries(new URLSearchParams(location.search))")
        assert params["model"] == "en-fr", params
        if name != "Heads":  # (Heads ranks on test pairs: no sentence)
            assert params["text"] == "the black cat sat ." and params["target"] == "le chat noir s' assit .", params
        expect(page.locator(".st-key-model input")).to_have_value("en-fr")  # the model's name alone


def test_a_leakage_lab_state_opens_the_same_in_a_new_browser(shipped_server):
    ready = "[data-testid=stPlotlyChart] .main-svg"
    with eb.open_page(shipped_server, 1366, 768) as page:
        before = open_from_explore(page, "Leakage lab", ready)
        page.locator(".st-key-leak_causal label").click()  # the causal mask off
        page.wait_for_function("() => location.search.includes('causal=0')", timeout=60_000)
        settle(page)
        page.locator(".st-key-leak_shift label").click()  # and the right shift
        page.wait_for_function("() => location.search.includes('shift=0')", timeout=60_000)
        page.locator(ready).first.wait_for(timeout=120_000)
        shown, link = shown_and_link(page)
    assert shown != before  # the switches changed what the page says
    assert "/Leakage_lab?" in link and "model=en-fr&" in link
    assert_reopens_the_same(link, ready, shown)


def test_an_alignment_state_opens_the_same_in_a_new_browser(shipped_server):
    ready = ".lens-svg svg"
    with eb.open_page(shipped_server, 1366, 768) as page:
        before = open_from_explore(page, "Alignment", ready)
        pick(page, "align_reading", "Shift-aware (row where the word is the input)")
        pick(page, "align_layer", "2")
        pick(page, "align_head", "3")
        page.wait_for_function("() => ['reading=shift', 'layer=2', 'head=3'].every(p => location.search.includes(p))",
                               timeout=60_000)
        shown, link = shown_and_link(page)
    assert shown["svg"] != before["svg"]  # another head's alignment is drawn
    assert_reopens_the_same(link, ready, shown)


def test_a_heads_state_opens_the_same_in_a_new_browser(shipped_server):
    ready = ".st-key-heads_rank button"
    with eb.open_page(shipped_server, 1366, 768) as page:
        open_from_explore(page, "Heads", ready)
        page.locator(".st-key-heads_n input[type=range]").press("ArrowRight")  # 50 -> 100 test pairs
        page.wait_for_function("() => location.search.includes('n=100')", timeout=60_000)
        settle(page)
        expect(page.get_by_text("the first 100 pairs of the test split", exact=False)).to_be_visible()
        shown, link = page.evaluate(SHOWN), page.evaluate("() => location.href")
    assert_reopens_the_same(link, ready, shown)
