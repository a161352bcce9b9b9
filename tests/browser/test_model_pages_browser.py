"""Single-user mode in a real browser: a folder opened on Explore is still the model on the
Alignment and Leakage lab pages (it used to fall back to the default model without a word)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from harness.browser import CHROMIUM, browser_page
from harness.models.tiny import build_tiny_checkpoint
from harness.server import app_env

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}"),
]


@pytest.fixture
def folders(tmp_path):
    mine = build_tiny_checkpoint(tmp_path / "my-folder-model", seed=5)
    card = json.loads((mine / "card.json").read_text())
    (mine / "card.json").write_text(json.dumps(card | {"variant": "opened-by-hand"}))
    return mine, build_tiny_checkpoint(tmp_path / "server-default")


@pytest.fixture
def server(folders, app_server):
    return app_server(app_env(LENS_DEFAULT_MODEL="en-fr", LENS_MODEL_DIRS=str(folders[1]), LENS_ALLOW_ANY_FOLDER="1"))


def test_a_folder_opened_in_single_user_mode_stays_on_every_page(server, folders):
    from playwright.sync_api import expect

    mine = folders[0]
    with browser_page(server, 1400, 1000) as page:
        box = page.locator(".st-key-any_folder input")
        box.wait_for(timeout=60_000)
        box.fill(str(mine))
        box.press("Enter")
        sidebar = page.locator("[data-testid='stSidebar']")
        picker = sidebar.locator(".st-key-model input")
        expect(picker).to_have_value("my-folder-model (folder)", timeout=60_000)
        expect(sidebar).to_contain_text("opened-by-hand", timeout=60_000)
        for link, title in (("Alignment", "Alignment"), ("Leakage lab", "Leakage lab"),
                            ("Explore", "Attention Lens")):
            sidebar.get_by_role("link", name=link).click()
            expect(page.locator("h1").first).to_contain_text(title, timeout=60_000)
            expect(picker).to_have_value("my-folder-model (folder)", timeout=60_000)
            expect(sidebar).to_contain_text("opened-by-hand", timeout=60_000)
