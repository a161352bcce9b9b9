"""E-LAB's browser checks (Playwright + Debian's Chromium, loopback only), on the shipped models, with the app
started from the repository root as ./run.sh starts it: no Deploy button for students (.streamlit/config.toml),
and the unknown-word notice next to the source box (LENS_UPDATE_SCREENSHOT=1 writes the screenshots to assets/)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, IDLE, SOURCE_SHOWN, launch
from harness.server import ROOT, app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"  # the README's pictures go to assets/
CASES = [("en-fr", "I love you so much .", ["you", "so", "much"]),
         ("de-en", "Ich liebe dich .", ["ich", "liebe", "dich"])]


@pytest.mark.parametrize("model,text,words", CASES, ids=[m for m, _, _ in CASES])
def test_no_deploy_button_and_the_unknown_words_notice(model, text, words, tmp_path, app_server):
    from playwright.sync_api import expect, sync_playwright

    shots = ROOT / "assets" if UPDATE else tmp_path
    url = app_server(app_env(LENS_DEFAULT_MODEL=model))
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(url)
            box = page.locator(".st-key-source input, .st-key-source textarea").first
            box.wait_for(timeout=90_000)
            expect(page.locator("[data-testid='stToolbar']")).to_have_count(1, timeout=30_000)
            assert page.locator("[data-testid='stAppDeployButton']").count() == 0
            assert page.get_by_role("button", name="Deploy").count() == 0
            box.fill(text)
            box.press("Enter")
            notice = page.locator("[data-testid='stAlert']").filter(has_text="Words this model does not know")
            expect(notice).to_have_count(1, timeout=90_000)
            for word in words:
                expect(notice).to_contain_text(f"“{word}”")
            # the picture of the new sentence, not the example's greyed out while the page reruns
            page.wait_for_function(SOURCE_SHOWN, arg=[words[-1]], timeout=90_000)
            page.locator(IDLE).wait_for(timeout=90_000)
            page.wait_for_timeout(800)
            page.screenshot(path=str(shots / f"unknown-words-{model}.png"))
            page.get_by_role("button", name="Words this model knows").click()
            expect(page.get_by_text("Nouns", exact=True)).to_be_visible(timeout=30_000)
            page.wait_for_timeout(500)
            page.screenshot(path=str(shots / f"known-words-{model}.png"))
        finally:
            browser.close()


# JS: the switch's track colour, its label's ":on"/":off" suffix, and the page's background.
SWITCH = """(key) => { const label = document.querySelector(`.st-key-${key} label`);
    const track = label.querySelector(':scope > span + div');
    const p = label.querySelector('[data-testid="stWidgetLabel"] p');
    return {checked: label.querySelector('input').checked, track: getComputedStyle(track).backgroundColor,
            suffix: getComputedStyle(p, '::after').content,
            page: getComputedStyle(document.querySelector('.stMain, [data-testid="stMain"]')).backgroundColor}; }"""


def luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of an rgb()/rgba() colour, alpha blended on white."""
    parts = [float(v) for v in css[css.index("(") + 1:-1].split(",")]
    alpha = parts[3] if len(parts) == 4 else 1.0
    rgb = [(c * alpha + 255 * (1 - alpha)) / 255 for c in parts[:3]]
    lin = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in rgb]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_leakage_switch_off_is_visible(tmp_path, app_server):
    """WCAG 2.1 (1.4.11) asks 3:1 for a control's state against its background; the off track was ~1.3:1."""
    from playwright.sync_api import sync_playwright

    url = app_server(app_env(LENS_DEFAULT_MODEL="en-fr"))
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(f"{url}/Leakage_lab")
            page.wait_for_selector(".st-key-leak_causal input", timeout=90_000)
            on = page.evaluate(SWITCH, "leak_causal")
            assert on["checked"] and on["suffix"] == '": on"'
            page.locator(".st-key-leak_causal label").click()
            page.wait_for_function("() => !document.querySelector('.st-key-leak_causal input').checked",
                                   timeout=60_000)
            page.wait_for_timeout(500)
            off = page.evaluate(SWITCH, "leak_causal")
            assert off["suffix"] == '": off"'
            assert contrast(off["track"], off["page"]) >= 3.0, off
            page.screenshot(path=str((ROOT / "assets" if UPDATE else tmp_path) / "leakage-switch-off.png"))
        finally:
            browser.close()
