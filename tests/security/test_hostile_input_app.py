"""Hardening, in the app (Streamlit's AppTest): hostile input is shown as text or refused with a message, broken
folders named by the operator are refused without stopping the page, and sessions never see each other's switches
nor change the shared model (its parameters hash the same before and after every switch and mode)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

import pytest
import torch
from attention_lens.app import registry
from streamlit.testing.v1 import AppTest

from harness.models import hf_tiny
from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import operator_configuration
from tests.fixtures.hostile import INPUTS, evil_pickle

APP = Path(__file__).resolve().parents[2] / "app"
ENTRY = str(APP / "streamlit_app.py")
LEAK = str(APP / "screens" / "leakage_lab.py")



CAT, CHAT = "the cat sat .", "le chat s' assit ."
MARKUP = ("<script", "<b>", "<img", "](javascript", "<span class='x'")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hard_app")
    good = build_tiny_checkpoint(root / "hard-good")
    out = {"good": good}
    for name in ("hard-truncated", "hard-pickle-only", "hard-config", "hard-no-tokenizer"):
        out[name] = shutil.copytree(good, root / name)
    w = out["hard-truncated"] / "model.safetensors"
    w.write_bytes(w.read_bytes()[:1000])
    (out["hard-pickle-only"] / "model.safetensors").unlink()
    evil_pickle(out["hard-pickle-only"] / "pytorch_model.bin", root / "MARKER")
    cfg = out["hard-config"] / "config.json"
    cfg.write_text(cfg.read_text().replace('"d_model": 32', '"d_model": 64'))
    (out["hard-no-tokenizer"] / "target.model").unlink()
    out["hard-marian"] = hf_tiny.build_marian(root / "hf" / "hard-marian")
    return out


@pytest.fixture
def env(models, monkeypatch):
    with operator_configuration(monkeypatch, [registry.operator_entries, registry.huggingface_entries]) as apply:
        apply(LENS_MODEL_DIRS=os.pathsep.join(str(p) for k, p in models.items() if k != "hard-marian"),
              LENS_HF_MODELS=str(models["hard-marian"]), LENS_DEFAULT_MODEL="hard-good")
        yield models


def session(page: str = ENTRY, source: str = CAT, target: str = CHAT, model: str = "hard-good") -> AppTest:
    at = AppTest.from_file(page, default_timeout=90)
    at.session_state["model"] = model
    at.session_state["preset"] = "custom"
    at.session_state["source"] = source
    at.session_state["target"] = target
    return at.run()


def shown_markup(at: AppTest) -> list[str]:
    """Every markdown-rendered string of the page (markdown, captions, alerts, sidebar) that holds markup a
    visitor typed, unescaped."""
    texts = [e.value for kind in ("markdown", "caption", "error", "warning", "info", "success")
             for e in at.get(kind)]
    return [t for t in texts if any(m in t for m in MARKUP)]


def source_box(at):
    """The source box: one line, or a multi-line box once the text is long (app/state.py LONG_SOURCE)."""
    boxes = [w for w in (*at.text_input, *at.text_area) if w.key == "source"]
    assert len(boxes) == 1, [w.key for w in (*at.text_input, *at.text_area)]
    return boxes[0]


def test_hostile_input_in_the_app(env):
    at = session()
    assert not at.exception
    for name, (text, expected) in INPUTS.items():
        # As a browser sends it: whole (the box has no maxlength; the page keeps the first state.TEXT_MAX
        # characters and says so), UTF-8 (a lone surrogate arrives as U+FFFD).
        text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        source_box(at).input(text).run()
        assert not at.exception, name
        if expected == "empty":
            assert any("empty" in e.value for e in at.error), name
            continue
        assert not at.error, (name, [e.value for e in at.error])
        assert at.session_state["step"] == 1
        if expected == "truncated":
            assert any("truncated" in w.value for w in at.warning), name
        assert not shown_markup(at), name
        at.button(key="next").click().run()  # stepping works on whatever came in
        assert not at.exception and at.session_state["step"] == 2, name
    source_box(at).input(INPUTS["html_script"][0]).run()
    chips = next(m for m in at.markdown if "tokens fed to the encoder" in m.value)
    assert chips.proto.allow_html and "&#60;" in chips.value and "<script" not in chips.value


def test_hostile_reference_target(env):
    at = session()
    at.radio(key="mode").set_value("teacher_forced").run()
    for target in ("<script>alert(1)</script> le chat", "\x00 \x07", " ".join(["chat"] * 300)):
        at.text_input(key="target").input(target).run()
        assert not at.exception
        assert not shown_markup(at)
    assert any("reference target" in w.value and "truncated" in w.value for w in at.warning)


@pytest.mark.parametrize("name,words", [("hard-truncated", "corrupt or truncated"), ("hard-pickle-only", "pickle"),
                                        ("hard-config", "config.json"), ("hard-no-tokenizer", "target.model")])
def test_broken_operator_folder_is_refused_and_the_page_keeps_working(env, name, words):
    at = session()
    at.selectbox(key="model").set_value(name).run()
    assert not at.exception
    errors = [e.value for e in at.error]  # shown once, in the main area
    assert errors and "Cannot open" in errors[0] and words in errors[0]
    assert not (env["good"].parent / "MARKER").exists()
    at.selectbox(key="model").set_value("hard-good").run()  # the same session goes on with a good model
    assert not at.exception and not at.error
    at.button(key="next").click().run()
    assert at.session_state["step"] == 2


# ---- isolation --------------------------------------------------------------------------------------------------
def parameter_hash(engine) -> str:
    """sha256 of every parameter and buffer, bytes and names, in a fixed order."""
    h = hashlib.sha256()
    module = engine.model
    for name, tensor in sorted([*module.named_parameters(), *module.named_buffers()], key=lambda kv: kv[0]):
        h.update(name.encode())
        h.update(tensor.detach().cpu().contiguous().view(torch.uint8).numpy().tobytes()
                 if tensor.dtype != torch.bool else tensor.numpy().tobytes())
    return h.hexdigest()


def first_tokens(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "tokens fed to the encoder" in m.value)


@pytest.mark.parametrize("key,folder", [("hard-good", "good"), ("hard-marian", "hard-marian")])
def test_sessions_are_isolated_and_the_shared_model_never_changes(env, key, folder):
    from attention_lens.app import services
    from attention_lens.model.engine.loader import load_engine

    on_disk = parameter_hash(load_engine(env[folder]))
    engine = services.get_engine(key)  # the cached object every session shares
    before = parameter_hash(engine)
    assert before == on_disk

    a, b = session(model=key), session(source="the black cat sat on the mat .", model=key)
    a.radio(key="mode").set_value("beam").run()
    b.radio(key="mode").set_value("sample").run()
    b.number_input(key="seed").set_value(3).run()
    a.button(key="next").click().run()
    a.button(key="next").click().run()
    b.button(key="end").click().run()
    a.run()
    assert not a.exception and not b.exception
    assert a.session_state["mode"] == "beam" and b.session_state["mode"] == "sample"
    assert a.session_state["step"] == 3 and b.session_state["step"] > 1
    assert first_tokens(a).count("lens-chip'") + 2 < first_tokens(b).count("lens-chip'")  # b's longer sentence
    assert a.session_state["source"] == CAT
    # forcing in one session leaves the other's run alone
    b.radio(key="mode").set_value("greedy").run()
    b.button(key="next").click().run()
    b.session_state["force_open"] = True  # the force box's expander, opened
    b.run()
    box = b.selectbox(key="force_choice")  # the box starts empty: pick a candidate, then force it
    box.set_value(box.options[0]).run()
    b.button(key="force").click().run()
    assert b.session_state["forced"]
    a.run()
    assert a.session_state["forced"] == () and a.session_state["step"] == 3
    a.radio(key="mode").set_value("teacher_forced").run()
    assert not a.exception and not a.error

    # The switches: one session with the causal mask off, the other with the shift off, on the Leakage lab.
    la, lb = session(LEAK, model=key), session(LEAK, model=key)
    la.toggle(key="leak_causal").set_value(False).run()
    lb.toggle(key="leak_shift").set_value(False).run()
    assert not la.exception and not lb.exception
    meter = {at: {m.label: m.value for m in at.metric} for at in (la, lb)}
    assert meter[la]["Max future mass"] != "0.0%"  # la sees the future...
    assert meter[lb]["Max future mass"] == "0.0%"  # ...lb, with its mask on, does not
    assert la.session_state["leak_shift"] and not lb.session_state["leak_shift"]
    assert not la.session_state["leak_causal"] and lb.session_state["leak_causal"]
    la.toggle(key="leak_shift").set_value(False).run()
    lb.toggle(key="leak_causal").set_value(False).run()
    la.radio(key="leak_view").set_value("probe").run()  # the probe perturbs inputs, never the model
    assert not la.exception and lb.session_state["leak_view"] == "switches"
    la.run()

    assert services.get_engine(key) is engine
    assert parameter_hash(engine) == before
    assert all(not p.requires_grad for p in engine.model.parameters())
    assert not engine.model.training


@pytest.mark.parametrize("page", ["streamlit_app.py", "screens/leakage_lab.py", "screens/alignment.py"])
def test_input_longer_than_the_model_is_truncated_with_a_warning_on_every_page(env, page):
    at = AppTest.from_file(str(APP / page), default_timeout=60).run()
    source_box(at).input(" ".join(["the black cat sat on the mat"] * 12) + " .").run()
    if any(w.key == "target" for w in at.text_input):  # teacher forcing: a new sentence drops the old reference
        at.text_input(key="target").input("le chat noir s' assit sur le tapis .").run()
    assert not at.exception
    assert any("truncated" in w.value for w in at.warning), [w.value for w in at.warning]
