""""Your model" in the app: Hugging Face seq2seq folders (and hub ids) named by the operator in LENS_HF_MODELS
render and step like ours; what cannot be opened is explained; the page reads a typed folder only in the
operator's single-user mode (LENS_ALLOW_ANY_FOLDER=1)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from attention_lens.app import registry
from streamlit.testing.v1 import AppTest

from harness.models import hf_tiny
from tests.fixtures.apptest import MODEL_SWITCHES, operator_configuration, stepper

APP = Path(__file__).resolve().parents[3] / "app"
ENTRY = str(APP / "streamlit_app.py")



SOURCE, TARGET = "the cat sat on the mat .", "le chat s' assit sur le tapis ."


@pytest.fixture(scope="module")
def hf(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("your_model")
    return {"marian": hf_tiny.build_marian(root / "tiny-marian"), "t5": hf_tiny.build_t5(root / "tiny-t5"),
            "bart": hf_tiny.build_bart(root / "tiny-bart"), "bert": hf_tiny.build_bert(root / "tiny-bert"),
            "gpt2": hf_tiny.build_gpt2(root / "tiny-gpt2"),
            "notok": hf_tiny.build_marian(root / "tiny-notok", tokenizer=False)}


@pytest.fixture
def configure(monkeypatch):
    """Set the operator's configuration; only the "your model" source (the checkpoints/ folder may hold
    shipped models or half-trained ones)."""
    with operator_configuration(monkeypatch, [registry.operator_entries, registry.huggingface_entries]) as apply:
        yield apply


def start(source: str = SOURCE) -> AppTest:
    at = AppTest.from_file(ENTRY, default_timeout=120)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = source
    at.session_state["target"] = TARGET
    return at.run()


def chips(at: AppTest, label: str) -> str:
    return next(m.value for m in at.markdown if label in m.value)


# ---- the registry ---------------------------------------------------------------------------------------------
def test_hf_entries_are_folders_or_hub_ids(tmp_path, monkeypatch):
    (tmp_path / "mine").mkdir()
    monkeypatch.chdir(tmp_path)
    env = {registry.ENV_HF: os.pathsep.join([str(tmp_path / "mine"), "Helsinki-NLP/opus-mt-en-fr", "t5-small",
                                             "./elsewhere", "../x/../../etc", " ", "mine"])}
    entries = registry.huggingface_entries(env)
    got = [(e.key, e.origin, e.hub_id) for e in entries]
    hub = "Helsinki-NLP/opus-mt-en-fr"
    assert got[:3] == [("mine", "huggingface", None), (hub, "hub", hub),
                       ("t5-small", "hub", "t5-small")]
    assert got[3][1:] == ("huggingface", None) and got[4][1:] == ("huggingface", None)
    assert got[5] == ("mine", "huggingface", None)  # an existing folder wins over a hub id of the same name
    assert entries[0].spec == (tmp_path / "mine").resolve() and entries[1].spec == "Helsinki-NLP/opus-mt-en-fr"


def test_switches_are_off_by_default(monkeypatch):
    for name in MODEL_SWITCHES:
        monkeypatch.delenv(name, raising=False)
    assert not registry.hub_allowed() and not registry.any_folder_allowed()
    for value in ("0", "", "no", "false"):
        monkeypatch.setenv(registry.ENV_ANY_FOLDER, value)
        assert not registry.any_folder_allowed()
    monkeypatch.setenv(registry.ENV_ANY_FOLDER, "1")
    assert registry.any_folder_allowed()


@pytest.mark.parametrize("crafted", ["folder:/etc", "folder:relative/path", "/etc", "folder:"])
def test_a_folder_key_opens_nothing_unless_the_operator_allows_it(crafted, configure):
    from attention_lens.app import services

    with pytest.raises(KeyError):
        registry.resolve(crafted)
    with pytest.raises(services.CheckpointError, match="not one of the models"):
        services.get_engine(crafted)


def test_hub_ids_are_not_downloaded_unless_allowed(configure):
    from attention_lens.app import services

    configure(LENS_HF_MODELS="someone/some-model")
    with pytest.raises(services.CheckpointError, match="LENS_ALLOW_HUB"):
        services.get_engine("someone/some-model")
    at = start()
    assert not at.exception
    assert any("switched off" in e.value for e in at.error)  # once, in the main area


# ---- the app on tiny Marian / T5 / BART ------------------------------------------------------------------------
@pytest.mark.parametrize("family", ["marian", "t5", "bart"])
def test_app_renders_and_steps_hf_models(hf, configure, family):
    folder = hf[family]
    configure(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name)
    at = start()
    assert not at.exception and not at.error and not at.sidebar.error
    assert at.session_state["model"] == folder.name
    assert any(family in m.value and "Hugging Face" in m.value for m in at.sidebar.markdown)
    tokens = chips(at, "tokens fed to the encoder")
    assert "lens-chip special" in tokens  # the end token (</s>) is marked as special
    assert "special token" in tokens  # and titled so (the legend caption gave way to the picture at 1366x768)
    m = stepper(at)[0]["m"]
    for step in range(2, min(m, 4) + 1):
        at.button(key="next").click().run()
        assert not at.exception and at.session_state["step"] == step
    for kind in ("decoder_self_attention", "encoder_self_attention"):
        at.segmented_control(key="kind").set_value(kind).run()
        assert not at.exception
    at.radio(key="mode").set_value("beam").run()
    at.slider(key="beam_size").set_value(2).run()
    at.radio(key="mode").set_value("teacher_forced").run()
    assert not at.exception and not at.error
    at.button(key="end").click().run()
    assert not at.exception


def test_switch_a_head_off_on_an_hf_model(hf, configure):
    """The one-head view's "switch this head off" works on a Hugging Face model as on ours (model.hf.ablation):
    the panel shows the probabilities of the original tokens with the head off, those of the engine's own run."""
    from attention_lens.app.screens.explore.analysis import K_ABLATED
    from attention_lens.model.engine import DecodeOptions
    from attention_lens.model.engine.loader import load_engine

    from tests.fixtures.apptest import array, figure

    folder = hf["marian"]
    configure(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name)
    at = start()
    at.segmented_control(key="view").set_value("head").run()
    at.button(key="head_off").click().run()
    assert not at.exception and not at.error
    assert at.session_state[K_ABLATED][folder.name] == ("cross:1:1",)  # not cleared by a refusal
    assert any("cross:1:1" in m.value for m in at.markdown)
    engine = load_engine(folder)
    plain = engine.trace(SOURCE)
    off = engine.trace(SOURCE, options=DecodeOptions(ablate=("cross:1:1",), forced=tuple(s.id for s in plain.steps),
                                                     max_len=plain.m))
    spec = figure(at, "ablation_probs")
    np.testing.assert_allclose(array(spec["data"][0]["y"]), [s.prob for s in plain.steps], rtol=1e-5)
    np.testing.assert_allclose(array(spec["data"][1]["y"]), [s.prob for s in off.steps], rtol=1e-5)
    assert [s.prob for s in plain.steps] != [s.prob for s in off.steps]


def test_long_input_on_an_hf_model_is_truncated_with_a_warning(hf, configure):
    configure(LENS_HF_MODELS=str(hf["marian"]), LENS_DEFAULT_MODEL="tiny-marian")
    at = start(" ".join(["cat"] * 200))
    assert not at.exception and not at.error
    assert any("truncated" in w.value and "at most 64" in w.value for w in at.warning)


@pytest.mark.parametrize("which,words", [("bert", "encoder-only"), ("gpt2", "decoder-only"),
                                         ("notok", "no tokenizer")])
def test_what_cannot_be_opened_is_explained(hf, configure, which, words):
    configure(LENS_HF_MODELS=os.pathsep.join([str(hf[which]), str(hf["marian"])]), LENS_DEFAULT_MODEL=hf[which].name)
    at = start()
    assert not at.exception
    errors = [e.value for e in at.error]  # once, in the main area
    assert errors and words in errors[0]
    at.selectbox(key="model").set_value("tiny-marian").run()  # the page goes on with another model
    assert not at.exception and not at.sidebar.error and not at.error


# ---- single-user mode -----------------------------------------------------------------------------------------
def test_no_folder_box_by_default(hf, configure):
    configure(LENS_HF_MODELS=str(hf["marian"]))
    at = start()
    assert not any(t.key == "any_folder" for t in at.text_input)


def test_any_folder_mode_opens_a_typed_folder(hf, configure, tmp_path):
    configure(LENS_HF_MODELS=str(hf["marian"]), LENS_ALLOW_ANY_FOLDER="1", LENS_DEFAULT_MODEL="tiny-marian")
    at = start()
    at.text_input(key="any_folder").input(str(hf["t5"])).run()
    assert not at.exception and not at.error
    assert at.session_state["model"] == registry.folder_key(str(hf["t5"]))
    assert any("t5" in m.value for m in at.sidebar.markdown)
    at.button(key="next").click().run()
    assert at.session_state["step"] == 2
    at.text_input(key="any_folder").input(str(tmp_path / "nothing-here")).run()
    assert not at.exception
    assert any("no such model folder" in e.value for e in at.error)  # once, in the main area
