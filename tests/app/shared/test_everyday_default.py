"""A new visitor lands on the everyday en-fr model with its typed-text presets; German typed into it gets a
hint naming the model that reads German."""

from __future__ import annotations

from pathlib import Path

from attention_lens.app import registry, services
from attention_lens.model.builtin.engine import BuiltinEngine
from streamlit.testing.v1 import AppTest

ROOT = Path(__file__).resolve().parents[3]
ENTRY = str(ROOT / "app" / "streamlit_app.py")


def test_a_new_visitor_opens_the_everyday_model_and_its_presets(monkeypatch):
    for name in ("LENS_DEFAULT_MODEL", "LENS_MODEL_DIRS", "LENS_HF_MODELS"):
        monkeypatch.delenv(name, raising=False)
    assert registry.default_key() == "everyday-en-fr"
    at = AppTest.from_file(ENTRY, default_timeout=120).run()
    assert not at.exception
    assert at.sidebar.selectbox(key="model").value == "everyday-en-fr"
    preset = at.selectbox(key="preset")
    assert preset.value == "ev-cat-mat"
    assert at.text_input(key="source").value == "The cat sat on the mat."
    assert "We sat on the bank of the river." in preset.options and "the cat sat" not in preset.options


def test_german_typed_into_the_english_model_names_the_german_one():
    en = services.get_engine("everyday-en-fr")
    hint = services.language_hint(en, "Wo ist der Bahnhof? Ich habe keine Zeit.")
    assert hint is not None and "German" in hint and "everyday-de-en" in hint
    assert services.language_hint(en, "Where is the train station?") is None
    de = services.get_engine("everyday-de-en")
    assert "everyday-en-fr" in (services.language_hint(de, "Where is the train station? I have no time.") or "")


def test_the_everyday_engine_is_the_shipped_folder():
    engine = services.get_engine("everyday-en-fr")
    assert isinstance(engine, BuiltinEngine) and engine.raw_text
