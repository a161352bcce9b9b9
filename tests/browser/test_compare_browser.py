"""The Compare page (issue 30) in a real browser: a comparison link opened in a new browser context (no session,
no history) reproduces both sides, the view and the step, and writes the same parameters back."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest

from tests.fixtures.browser import CHROMIUM, IDLE, LAUNCH_ARGS, free_port, serve
from tests.fixtures.checkpoints import build_tiny_checkpoint

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]
LINK = {"model": "tiny-a", "a_text": "the cat sat .", "b_model": "tiny-b", "b_text": "the cat sat on the mat .",
        "kind": "enc", "layer": "2", "head": "3", "step": "2"}


@pytest.fixture
def server(tmp_path):
    models = build_tiny_checkpoint(tmp_path / "tiny-a"), build_tiny_checkpoint(tmp_path / "tiny-b", seed=1)
    env = {k: v for k, v in os.environ.items() if not k.startswith("LENS_")}
    env.update(LENS_MODEL_DIRS=os.pathsep.join(str(m) for m in models), LENS_DEFAULT_MODEL="tiny-a")
    proc = serve(env, port := free_port())
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait(timeout=15)


def test_a_comparison_link_in_a_new_context_reproduces_both_sides(server):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        try:
            context = browser.new_context(viewport={"width": 1366, "height": 768})
            page = context.new_page()
            page.goto(f"{server}/Compare?{urllib.parse.urlencode(LINK)}")
            expect(page.locator(".st-key-cmp_a_text input")).to_have_value(LINK["a_text"], timeout=90_000)
            expect(page.locator(".st-key-cmp_b_text input")).to_have_value(LINK["b_text"], timeout=90_000)
            expect(page.locator(".st-key-cmp_b_model").get_by_role("combobox")).to_have_value("tiny-b", timeout=90_000)
            for side, model in (("cmp_a", "A: tiny-a"), ("cmp_b", "B: tiny-b")):
                expect(page.locator(f".st-key-{side} .js-plotly-plot")).to_contain_text(
                    f"{model} · Encoder self-attention · layer 2 · head 3", timeout=90_000)
            expect(page.locator(".st-key-cmp_diff .js-plotly-plot")).to_contain_text("A − B", timeout=90_000)
            page.locator(IDLE).wait_for(timeout=90_000)
            written = dict(urllib.parse.parse_qsl(urllib.parse.urlparse(page.url).query))
            assert {k: written[k] for k in LINK} == LINK
        finally:
            browser.close()
