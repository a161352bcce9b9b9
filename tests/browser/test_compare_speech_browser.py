"""Compare on a speech model in Chromium at 1366 x 768 (a tiny random Whisper, two clips as its examples): each
side draws its clip's spectrogram under the keys with its players, and A − B below them labels its clip columns
with time ticks that do not run into each other (each frame's label, upright, overlapped its neighbours)."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.browser import CHROMIUM, IDLE, PAIR, PAIR_DIFF, PAIR_SIDE, launch
from harness.server import app_env
from tests.fixtures.speech_app import speech_setup

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (installed by .ci/run)"),
]

# JS: per side, its spectrogram strips and players; A − B's shown key labels (not thinned) with their boxes
SHOWN = f"""() => ({{
  sides: [...document.querySelectorAll('{PAIR_SIDE}')].map(s => ({{
    strips: s.querySelectorAll('.lens-mel').length,
    players: [...s.querySelectorAll('.lens-audiobar button')].map(b => b.textContent)}})),
  keys: [...document.querySelectorAll('{PAIR_DIFF} .lens-klabels .lens-k')].filter(e => !e.classList.contains('thin'))
    .map(e => {{ const r = e.getBoundingClientRect(); return {{text: e.textContent, left: r.left, right: r.right,
                                                              top: r.top, bottom: r.bottom}}; }})}})"""


@pytest.fixture(scope="module")
def speech_url(app_server, tmp_path_factory) -> str:
    return app_server(app_env(**speech_setup(tmp_path_factory.mktemp("compare_speech")), LENS_WARMUP="0"))


def test_two_clips_compared_with_their_spectrograms_and_readable_times(speech_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.goto(speech_url + "/Compare")
            page.wait_for_function(f"() => document.querySelectorAll('{PAIR_SIDE} .lens-mel').length >= 2",
                                   timeout=240_000)
            page.locator(IDLE).wait_for(timeout=60_000)
            for _ in range(3):  # a few steps in the browser: the difference has rows
                page.locator(f"{PAIR} .lens-bar .lens-next").first.click()
            page.wait_for_function(f"() => document.querySelector('{PAIR}').dataset.step === '4'", timeout=30_000)
            shown = page.evaluate(SHOWN)
        finally:
            browser.close()
    for side in shown["sides"]:
        assert side["strips"] == 1 and any("Whole clip" in b for b in side["players"]), side
    keys = shown["keys"]
    assert len(keys) >= 3 and all(k["text"].endswith(" s") or k["text"].startswith("padding") for k in keys), keys
    for a, b in zip(keys, keys[1:]):
        assert a["right"] <= b["left"] + 0.5, (a, b)  # side by side, none over its neighbour
