"""A model with no test split of its own (a Hugging Face folder: its card names no built-in language pair) is never
measured on another language's sentences: the Heads page says that no test split ships for it and offers the user's
own file, and services.examples_of_test_split refuses with that message (the Leakage lab's sample uses it)."""

from __future__ import annotations

import pytest
from attention_lens.app import registry
from streamlit.testing.v1 import AppTest

from harness.models import hf_tiny
from tests.fixtures.apptest import ENTRY, operator_configuration


@pytest.fixture(scope="module")
def marian(tmp_path_factory):
    return hf_tiny.build_marian(tmp_path_factory.mktemp("no_split") / "tiny-marian")


@pytest.fixture
def on_marian(monkeypatch, marian):
    with operator_configuration(monkeypatch, [registry.huggingface_entries]) as apply:
        apply(LENS_HF_MODELS=str(marian), LENS_DEFAULT_MODEL=str(marian))
        yield marian


def test_heads_page_offers_no_test_split_of_another_language(on_marian):
    at = AppTest.from_file(ENTRY, default_timeout=120).run()
    at.switch_page("screens/heads.py").run()
    assert not at.exception
    said = " ".join(i.value for i in at.info)
    assert "No test split ships for this model" in said, said
    assert not [b for b in at.button if b.key == "heads_rank"]  # nothing to rank on
    assert not [e for e in at.expander if "Ranked on" in e.label]
    at.segmented_control(key="heads_data").set_value("file").run()  # the user's own file stays one click away
    assert at.get("file_uploader")


def test_examples_of_test_split_refuses_a_model_without_a_test_split(on_marian):
    from attention_lens.app import services

    engine = services.get_engine(registry.entries()[0].key)
    with pytest.raises(services.ModelInputError, match="No test split ships for this model"):
        services.examples_of_test_split(engine, 5)
