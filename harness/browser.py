"""Debian's Chromium through Playwright (`launch`, `browser_page`) and what Explore's page shows, as CSS selectors
and JS predicates a test or benchmark waits on (`ATTENTION`, `ROW_SHOWN`, `DRAWN`, `CHIPS`, `SOURCE_SHOWN`,
`IDLE`)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

CHROMIUM = "/usr/bin/chromium"
LAUNCH_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--no-first-run"]

# ---- the page ------------------------------------------------------------------------------------------------------
# CSS: Explore's attention picture.
ATTENTION = ".st-key-attention [data-testid=lens-stepper] .lens-picture"  # Explore's stepper (app/render/stepper)
# JS: the stepper shows exactly rows 0..index (its step is index + 1, set as it draws the canvases; in the
# encoder's view every source row is drawn and the step is what the rest of the stepper shows).
ROW_SHOWN = """([index]) => { const el = document.querySelector('[data-testid=lens-stepper]');
    return !!el && el.dataset.step === String(index + 1) && !!el.querySelector('canvas'); }"""
# JS: a fingerprint of what the attention picture shows (its canvases' pixels), to see the picture change.
DRAWN = """() => { const el = document.querySelector('[data-testid=lens-stepper] .lens-picture');
    if (!el) return ''; const d = [...el.querySelectorAll('canvas')].map(c => c.toDataURL()).join('|');
    let h = 0; for (let i = 0; i < d.length; i++) h = (h * 31 + d.charCodeAt(i)) | 0; return String(h); }"""
CHIPS = "[data-testid=lens-stepper] .lens-prefix .lens-chip"
# JS: the encoder's tokens, joined without word marks, contain this text (the new sentence has been run).
SOURCE_SHOWN = """([text]) => { const el = document.querySelector('.st-key-tokens');
    return !!el && el.textContent.replace(/[\\s\u2581]/g, '').includes(text); }"""
# CSS: Streamlit's own marker of an idle page (the script run has finished; an action during a rerun can land on
# a stale button, and a picture taken then shows the previous elements greyed out).
IDLE = "[data-testid=stApp][data-test-script-state=notRunning]"
# Two runs under one step bar (app/render/stepper/pair.js: Compare, the Leakage lab's training vs inference): the
# bar's stepper (data-step, data-m, data-drawn), each run's own stepper in it (its panels' data-row: the current
# row drawn) and A − B below them (data-rows, data-cols, data-values).
PAIR = "[data-testid=lens-stepper].lens-pairmode"
PAIR_SIDE = "[data-testid=lens-pair-side]"
PAIR_DIFF = f"{PAIR} .lens-diff"


# ---- a browser -----------------------------------------------------------------------------------------------------
def launch(playwright):
    """Debian's Chromium with the project's flags, from a sync or async Playwright (await the result of the
    latter)."""
    return playwright.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)


@contextlib.contextmanager
def browser_page(url: str, width: int = 1500, height: int = 1400, **page_args) -> Iterator:
    """A fresh Chromium page (sync Playwright) of width x height px opened on `url`; the browser is closed when
    the `with` block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, **page_args)
            page.goto(url)
            yield page
        finally:
            browser.close()
