"""A multilingual model in the served app (the tiny NLLB of harness/models/hf_families): the sidebar offers its own
language codes; the target language chosen there is written into the page's link (`tgt_lang`) and into the link
"Copy link" gives, and that shared link, opened in a fresh page, opens on the same target language, whose code
the decoder writes as its first token (the stepper's first output chip)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from harness.browser import CHIPS, CHROMIUM, IDLE, ROW_SHOWN, launch
from harness.models import hf_families
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM} (installed by .ci/run)"),
]


@pytest.fixture
def server(app_server):
    folder = hf_families.cached("nllb")
    return app_server(app_env(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name, LENS_WARMUP="0"))


def _choose(page, label: str, code: str) -> None:
    box = page.get_by_role("combobox", name=label)
    box.click()
    box.fill(code)
    page.get_by_role("option", name=code, exact=True).click()


def test_target_language_chosen_in_the_app_is_carried_by_a_shared_link(server):
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1500, "height": 1200})
            page.goto(f"{server}/?text=the+cat+sat+.")
            page.wait_for_function(ROW_SHOWN, arg=[0], timeout=120_000)
            tgt = page.get_by_role("combobox", name="Target language")
            expect(tgt).to_be_visible(timeout=60_000)
            expect(page.get_by_role("combobox", name="Source language")).to_have_value("eng_Latn")
            page.locator(IDLE).wait_for(timeout=60_000)
            assert page.locator(CHIPS).first.inner_text() == "fra_Latn"  # the model's own default, forced first
            _choose(page, "Target language", "deu_Latn")
            page.wait_for_function("() => location.search.includes('tgt_lang=deu_Latn')", timeout=60_000)
            assert parse_qs(urlsplit(page.url).query)["tgt_lang"] == ["deu_Latn"]
            page.locator(IDLE).wait_for(timeout=60_000)
            expect(page.locator(CHIPS).first).to_have_text("deu_Latn", timeout=60_000)
            page.get_by_text("Copy link").click()  # the link a person shares
            link = page.locator("[data-testid=stPopoverBody] code").inner_text().strip()
            assert parse_qs(urlsplit(link).query)["tgt_lang"] == ["deu_Latn"]

            fresh = browser.new_page(viewport={"width": 1500, "height": 1200})
            fresh.goto(link)
            fresh.wait_for_function(ROW_SHOWN, arg=[0], timeout=120_000)
            expect(fresh.get_by_role("combobox", name="Target language")).to_have_value("deu_Latn", timeout=60_000)
            fresh.locator(IDLE).wait_for(timeout=60_000)
            # the run it opens decodes into that language: its first output token is the forced language code
            expect(fresh.locator(CHIPS).first).to_have_text("deu_Latn", timeout=60_000)
            assert parse_qs(urlsplit(fresh.url).query)["tgt_lang"] == ["deu_Latn"]
        finally:
            browser.close()
