"""The model stays the same on every page, including a folder typed in single-user mode; a model
that cannot be opened is explained in the main area, with what to do; the sidebar shows the card's
`test_metrics`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from attention_lens.app import registry
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import operator_configuration

APP = Path(__file__).resolve().parents[3] / "app"
ENTRY = str(APP / "streamlit_app.py")
PAGES = ["screens/alignment.py", "screens/leakage_lab.py", "screens/explore/page.py"]


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("pages")
    mine = build_tiny_checkpoint(root / "my-model", seed=3)
    card = json.loads((mine / "card.json").read_text())
    card["test_metrics"] = {"bleu": 42.5, "exact_match": 0.25}
    (mine / "card.json").write_text(json.dumps(card))
    other = build_tiny_checkpoint(root / "other-model")
    broken = root / "broken-model"
    shutil.copytree(mine, broken)
    (broken / "model.safetensors").write_bytes(b"\0" * 16)
    return {"mine": mine, "other": other, "broken": broken}


@pytest.fixture
def configure(monkeypatch):
    with operator_configuration(monkeypatch, [registry.operator_entries]) as apply:
        yield apply


def start() -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=120)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = "the cat sat ."
    at.session_state["target"] = "le chat s' assit ."
    return at.run()


def test_a_typed_folder_stays_on_every_page(folders, configure):
    configure(LENS_MODEL_DIRS=str(folders["other"]), LENS_ALLOW_ANY_FOLDER="1")
    at = start()
    at.text_input(key="any_folder").input(str(folders["mine"])).run()
    key = registry.folder_key(str(folders["mine"]))
    assert at.session_state["model"] == key
    assert any("BLEU: 42.5" in c.value for c in at.sidebar.caption)
    for page in PAGES:
        at.switch_page(page).run()
        assert not at.exception, page
        assert at.session_state["model"] == key, page
        assert at.selectbox(key="model").value == key, page


def test_the_sidebar_shows_the_cards_test_metrics(folders, configure):
    configure(LENS_MODEL_DIRS=str(folders["mine"]))
    at = start()
    assert any("BLEU: 42.5" in c.value and "match: 25.0%" in c.value for c in at.sidebar.caption)


@pytest.mark.parametrize("page", PAGES)
def test_a_load_error_is_in_the_main_area_with_what_to_do(folders, configure, page):
    configure(LENS_MODEL_DIRS=str(folders["broken"]))
    at = AppTest.from_file(ENTRY, default_timeout=120)
    at.switch_page(page).run()
    assert not at.exception
    main_errors = [e.value for e in at.main.error]
    assert any("corrupt or truncated" in e for e in main_errors), main_errors
    assert any("What to do" in e for e in main_errors), main_errors
