"""The Alignment page of a speech model (a tiny Whisper): the held-out test clips ranked head by head, the chosen
set's figures, the DTW view of the worst clip and the generation config to download; a typed head outside the
model is one line and nothing is ranked."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ALIGNMENT, clear_caches
from tests.fixtures.shaped_whisper import shaped_whisper_folder

pytestmark = pytest.mark.slow  # the page runs a Whisper model over clips (tens of seconds on a shared machine)


@pytest.fixture(scope="module")
def whisper(tmp_path_factory):
    return shaped_whisper_folder(tmp_path_factory.mktemp("timing") / "tiny-whisper")


@pytest.fixture
def page(monkeypatch, whisper):
    from attention_lens.app import registry

    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries])
    monkeypatch.setenv("LENS_HF_MODELS", str(whisper))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", whisper.name)
    clear_caches()
    at = AppTest.from_file(ALIGNMENT, default_timeout=180)
    at.session_state["timing_n"] = 4
    return at.run()


def test_shipped_clips_ranked_with_the_dtw_view(page):
    at = page
    assert not at.exception and not at.error
    assert [s.value for s in at.subheader] == ["Which heads time the words?"]
    at.button(key="timing_rank").click().run()
    assert not at.exception and not at.error
    labels = [m.label for m in at.metric]
    assert labels == ["Median word-start error", "Within 100 ms", "Words scored", "Head set"]
    assert any("chosen greedily on 2 clips" in c.value for c in at.caption)
    assert at.selectbox(key="timing_clip").value.endswith(".flac")
    assert any("warping path" in c.value for c in at.caption)  # the DTW view's caption under its figure
    assert len(at.get("plotly_chart")) == 1
    assert len(at.get("download_button")) == 1


def test_a_head_outside_the_model_is_one_line(page):
    at = page
    at.text_input(key="timing_heads").input("9:0").run()
    assert not at.exception
    assert [e.value for e in at.error] == ["--alignment-heads 9:0: this model has 2 decoder layers x 4 heads "
                                           "(0-based)"]
