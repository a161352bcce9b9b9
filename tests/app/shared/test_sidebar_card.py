"""The sidebar's model card names the model chosen (everyday-en-fr, not its pair "en-fr"), its measures in words
(no raw keys such as teacher_forced_accuracy), and a model that cannot be opened is explained once, in the
main area (it was shown twice: the sidebar and the main area)."""

from __future__ import annotations

import os

from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ENTRY, shipped_app


def test_the_card_names_the_model_and_its_measures_in_words(monkeypatch):
    at = shipped_app(monkeypatch, "everyday-en-fr", timeout=240).run()
    assert not at.exception
    card = " ".join(m.value for m in at.sidebar.markdown) + " " + " ".join(c.value for c in at.sidebar.caption)
    assert "**everyday-en-fr**" in card, card
    assert "&#95;" not in card and "_" not in card, card  # no raw key such as teacher_forced_accuracy
    assert "teacher-forced accuracy" in card and "BLEU" in card and "chrF" in card, card


def test_a_model_that_cannot_be_opened_is_explained_once(monkeypatch, tmp_path):
    broken = tmp_path / "broken-model"
    broken.mkdir()
    (broken / "config.json").write_text("{not json", encoding="utf-8")
    for name in ("LENS_HF_MODELS", "LENS_ALLOW_HUB", "LENS_ALLOW_ANY_FOLDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LENS_MODEL_DIRS", os.pathsep.join([str(broken)]))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", "broken-model")
    at = AppTest.from_file(ENTRY, default_timeout=240)
    at.session_state["model"] = "broken-model"
    at.run()
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "Cannot open the model" in errors[0], errors


def test_a_model_named_for_its_pair_is_named_once(monkeypatch):
    at = shipped_app(monkeypatch, "en-fr", timeout=240).run()
    card = " ".join(m.value for m in at.sidebar.markdown)
    assert "**en-fr** · English → French, grammar corpus · healthy" in card and "en-fr · en-fr" not in card, card
