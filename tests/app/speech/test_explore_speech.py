"""Explore on a speech model (a tiny random Whisper): a shipped clip opens the page with the clip's spectrogram and
times on the stepper's source axis, language and task come from the sidebar and the link, and an upload the reader
refuses is one line while the page keeps working."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from harness.models.whisper import clip
from tests.fixtures.apptest import ENTRY, clear_caches, stepper
from tests.fixtures.speech_app import BAD_UPLOADS, CLIPS, speech_setup, wav

pytestmark = pytest.mark.slow  # each test runs the page on a Whisper model (10-20 s on a shared 2-core machine)


@pytest.fixture(scope="module")
def speech_env(tmp_path_factory) -> dict[str, str]:
    return speech_setup(tmp_path_factory.mktemp("speech"))


@pytest.fixture
def app(monkeypatch, speech_env):
    from attention_lens.app import registry

    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries])
    for name, value in speech_env.items():
        monkeypatch.setenv(name, value)
    clear_caches()

    def run(**params: str) -> AppTest:
        at = AppTest.from_file(ENTRY, default_timeout=90)
        for name, value in params.items():
            at.query_params[name] = value
        return at.run()
    return run


def _labels(at: AppTest) -> dict[str, object]:
    return {w.label: w.value for w in [*at.selectbox, *at.radio]}


def test_a_shipped_clip_opens_with_its_spectrogram_and_times(app):
    at = app()
    assert not at.exception and not at.error
    shown = _labels(at)
    assert shown["Clip"] == "tones-a"
    assert shown["Language of the clip"] == "en" and shown["Task"] == "transcribe"
    header, arrays = stepper(at)
    audio = header["audio"]
    seconds = CLIPS["tones-a"][0]
    assert audio["duration_s"] == pytest.approx(seconds)
    assert audio["padding"]["index"] == header["n"] - 1  # one column for the padding, the last
    assert header["source"][-1].startswith("padding") and header["source"][0] == "0.00 s"
    assert audio["mel"]["bins"] == 80 and audio["samples"]["n"] == round(seconds * 16_000)
    assert header["target"][:3] == ["<|en|>", "<|transcribe|>", "<|notimestamps|>"]  # the forced prefix
    assert arrays["cross_attention"].shape[-1] == header["n"]
    assert any("encoder frames of 20 ms" in c.value for c in at.caption)
    assert at.query_params["clip"] == "tones-a" and at.query_params["language"] == "en"


def test_language_and_task_from_the_link_are_the_run_and_stay_in_it(app):
    at = app(clip="tones-b", language="de", task="translate")
    assert not at.exception and not at.error
    shown = _labels(at)
    assert (shown["Clip"], shown["Language of the clip"], shown["Task"]) == ("tones-b", "de", "translate")
    header, _ = stepper(at)
    assert header["target"][:2] == ["<|de|>", "<|translate|>"]
    assert header["audio"]["language"] == "de" and header["audio"]["task"] == "translate"
    assert (at.query_params["language"], at.query_params["task"]) == ("de", "translate")
    at.radio(key="task").set_value("transcribe").run()
    assert stepper(at)[0]["target"][:2] == ["<|de|>", "<|transcribe|>"]
    assert at.query_params["task"] == "transcribe"


def test_an_upload_is_heard(app):
    at = app()
    at.selectbox(key="clip").set_value("upload").run()
    assert not at.exception and not at.error and "clip" not in at.query_params  # an upload cannot travel in a link
    at.file_uploader(key="clip_upload").upload("mine.wav", wav(clip(1.0, rate=22_050), 22_050), "audio/wav").run()
    assert not at.exception and not at.error
    header, _ = stepper(at)
    assert header["audio"]["duration_s"] == pytest.approx(1.0, abs=0.01)


@pytest.mark.parametrize("case", list(BAD_UPLOADS))
def test_a_refused_upload_is_one_line_and_the_page_keeps_working(app, case):
    name, data, said = BAD_UPLOADS[case]
    at = app()
    at.selectbox(key="clip").set_value("upload").run()
    at.file_uploader(key="clip_upload").upload(name, data, "audio/wav").run()
    assert not at.exception
    assert len(at.error) == 1 and said in at.error[0].value and name in at.error[0].value
    assert "\n" not in at.error[0].value.strip()
    at.selectbox(key="clip").set_value("tones-a").run()  # another clip: the page works on
    assert not at.exception and not at.error and stepper(at)[0]["audio"]


def test_leakage_lab_switches_the_mask_off_on_a_clip(app):
    from tests.fixtures.apptest import LEAKAGE

    app()  # the environment and caches of the speech model
    at = AppTest.from_file(LEAKAGE, default_timeout=90).run()
    assert not at.exception and not at.error
    meters = {m.label: m.value for m in at.metric}
    assert meters["Max future mass"] == "0.0%"  # the mask on: no weight on the future
    at.toggle(key="leak_causal").set_value(False).run()
    assert not at.exception and not at.error
    assert float(at.metric[0].value.rstrip("%")) > 0  # the mask off: the rows read the future
    at.radio(key="leak_view").set_value("probe").run()
    assert not at.exception and len(at.info) >= 1 and "speech model" in at.info[-1].value
