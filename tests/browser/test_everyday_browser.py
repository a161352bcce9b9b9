"""A new visitor, in Chromium: the page opens on the everyday en-fr model; a typed question stepped to its end
shows a French sentence. LENS_UPDATE_SCREENSHOT=1 writes the README's screenshots (assets/everyday-*.png)."""

from __future__ import annotations

import os

import pytest

from tests.browser.explore_browser import open_page
from tests.fixtures.browser import CHIPS, CHROMIUM, IDLE, ROOT, SOURCE_SHOWN, free_port, serve

pytestmark = [pytest.mark.browser]
UPDATE = os.environ.get("LENS_UPDATE_SCREENSHOT") == "1"
QUESTION = "Where is the train station?"
# JS: the step panel says "Step m of m" (the last step is shown).
AT_END = """() => { const m = document.body.innerText.match(/Step (\\d+) of (\\d+)/);
    return !!m && m[1] === m[2] && m[1] !== '1'; }"""


@pytest.fixture(scope="module")
def visitor_server():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    # No LENS_ variable at all: what a visitor of `./run.sh app` gets.
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")} | {"LENS_WARMUP": "0"}
    proc = serve(env, port := free_port())
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=15)


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_a_new_visitor_types_a_question_and_reads_french(visitor_server, tmp_path, size):
    with open_page(visitor_server, *size) as page:
        page.wait_for_url("**model=everyday-en-fr**", timeout=30_000)  # the page writes its state into the URL
        box = page.locator(".st-key-source input")
        assert box.input_value() == "The cat sat on the mat."  # the everyday model's first preset
        box.fill(QUESTION)
        box.press("Enter")
        page.wait_for_function(SOURCE_SHOWN, arg=["Whereisthetrainstation?"], timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        page.locator(".st-key-end button").click()
        page.wait_for_function(AT_END, timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        page.wait_for_timeout(800)
        written = " ".join(page.locator(CHIPS).all_inner_texts())
        assert "gare" in written, written
        assert page.locator("[data-testid='stException']").count() == 0
        out = ROOT / "assets" / f"everyday-{size[0]}.png" if UPDATE else tmp_path / "shot.png"
        page.screenshot(path=str(out))
