"""The Alignment page's "Method … · links …" line at 1366 x 768 in Chromium (everyday-en-fr, its first example):
the links wrap between links, never inside one (Streamlit's inline code broke "5-6" into "5-" and "6")."""

from __future__ import annotations

import pytest

from harness.browser import IDLE, browser_page
from harness.server import app_env

pytestmark = [pytest.mark.browser]
# JS: the links' code element, once drawn; then every link that the browser laid out on more than one line
LINKS = """() => [...document.querySelectorAll('[data-testid=stMain] code')]
    .find(c => /^(\\d+[-?]\\d+ )+\\d+[-?]\\d+$/.test(c.textContent.trim())) || null"""
SPLIT = "() => { const c = (" + LINKS + """)(); const text = c.textContent; const split = [];
    const walker = document.createTreeWalker(c, NodeFilter.SHOW_TEXT); const nodes = [];
    while (walker.nextNode()) nodes.push(walker.currentNode);
    let at = 0; const where = [];  // each character: its text node and offset
    for (const n of nodes) for (let i = 0; i < n.length; i++) where[at++] = [n, i];
    for (const m of text.matchAll(/\\d+[-?]\\d+/g)) {
        const r = document.createRange(); const [a, i] = where[m.index];
        const [b, j] = where[m.index + m[0].length - 1];
        r.setStart(a, i); r.setEnd(b, j + 1);
        const tops = new Set([...r.getClientRects()].map(x => Math.round(x.top)));
        if (tops.size > 1) split.push(m[0]); }
    return split; }"""


def test_links_wrap_between_links_not_inside_one(app_server):
    url = app_server(app_env(LENS_WARMUP="0"))
    with browser_page(f"{url}/Alignment", 1366, 768, device_scale_factor=1) as page:
        page.wait_for_function(LINKS, timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        count = page.evaluate(f"() => (({LINKS})()).textContent.trim().split(/ +/).length")
        assert count >= 8  # enough links to wrap at this width
        assert page.evaluate(SPLIT) == []
