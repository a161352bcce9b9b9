"""Compare on a speech model (a tiny random Whisper, two clips as its examples): a clip on each side, each side sent
with its spectrogram, times and samples as Explore sends a clip (pooled the same way), stepping under one bar with
A − B where the times match; the same clip on both sides differs nowhere; a link names both clips; a text model on
side B is one line, and the page works on."""

from __future__ import annotations

import html

import numpy as np
import pytest
from attention_lens.app.render import stepper as packing
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ENTRY, clear_caches, pair
from tests.fixtures.checkpoints import shipped_checkpoint
from tests.fixtures.speech_app import CLIPS, speech_setup

pytestmark = pytest.mark.slow  # each test runs a Whisper model on two clips (10-20 s on a shared 2-core machine)


@pytest.fixture(scope="module")
def speech_env(tmp_path_factory) -> dict[str, str]:
    return speech_setup(tmp_path_factory.mktemp("compare_speech"))


@pytest.fixture
def compare(monkeypatch, speech_env):
    from attention_lens.app import registry

    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries, registry.shipped_entries])
    for name, value in speech_env.items():
        monkeypatch.setenv(name, value)
    clear_caches()

    def run(**params: str) -> AppTest:
        at = AppTest.from_file(ENTRY, default_timeout=120).run()
        for name in list(at.query_params):
            del at.query_params[name]
        at.query_params.update(params)
        return at.switch_page("screens/compare.py").run()
    return run


def test_two_clips_side_by_side_with_their_spectrograms(compare):
    at = compare()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.selectbox(key="cmp_a_clip").value == "tones-a" and at.selectbox(key="cmp_b_clip").value == "tones-b"
    header, runs = pair(at)
    assert header["diff"] and header["m"] == max(h["m"] for h, _ in runs)
    for (h, arrays), name in zip(runs, ["tones-a", "tones-b"]):
        audio = h["audio"]
        seconds = CLIPS[name][0]
        assert audio["duration_s"] == pytest.approx(seconds)
        assert audio["samples"]["n"] == round(seconds * 16_000) and audio["mel"]["bins"] == 80
        assert audio["padding"]["index"] == h["n"] - 1 and h["source"][0] == "0.00 s"
        assert arrays["cross_attention"].shape[-1] == h["n"]
    assert at.query_params["a_clip"] == "tones-a" and at.query_params["b_clip"] == "tones-b"
    # the server's hidden step widget steps both sides (the browser steps them without it)
    at.slider(key="cmp_step").set_value(2).run()
    assert not at.exception and pair(at)[0]["step"] == 2


def test_the_same_clip_on_both_sides_differs_nowhere_over_the_spectrogram(compare):
    at = compare(a_clip="tones-b", b_clip="tones-b", kind="cross", head="0")
    assert not at.exception and not at.error
    header, runs = pair(at)
    (ha, wa), (hb, wb) = runs
    assert ha["source"] == hb["source"] and ha["audio"]["times"] == hb["audio"]["times"]
    rows, cols, diff = packing.pair_difference(runs, header["m"])
    assert len(cols) == ha["n"] and np.abs(diff).max() == 0  # every time column matches, and nothing differs


def test_a_text_model_on_side_b_is_one_line_and_the_page_works_on(compare, speech_env):
    shipped_checkpoint("en-fr")
    at = compare(b_model="en-fr")
    assert not at.exception
    said = [html.unescape(e.value) for e in at.error]
    assert said == ["B: en-fr reads text, not a clip: compare a speech model with a speech model (or open a text "
                    "model in the sidebar)"]
    at.selectbox(key="cmp_b_model").set_value(speech_env["LENS_DEFAULT_MODEL"]).run()
    assert not at.exception and not at.error
    assert pair(at)[1][1][0]["audio"]
