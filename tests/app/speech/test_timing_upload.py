"""The Alignment page of a speech model (a tiny Whisper), clips uploaded: a clip list, a CTM and the clips (four of
the shipped held-out test clips) rank every head; a bad upload — a file that is not audio, a CTM or list naming
clips that are not there, an empty file — is one error line, and the page ranks the good upload right after it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ALIGNMENT, clear_caches
from tests.fixtures.checkpoints import ROOT
from tests.fixtures.shaped_whisper import shaped_whisper_folder

pytestmark = pytest.mark.slow  # the page runs a Whisper model over clips (tens of seconds on a shared machine)

TEST = ROOT / "assets" / "speech" / "test"
N = 4  # clips: the first two choose the heads, the other two are reported


def _stem(line: str) -> str:
    return os.path.splitext(os.path.basename(line.split("\t")[0]))[0]


LINES = TEST.joinpath("list.tsv").read_text(encoding="utf-8").splitlines()[:N]
LISTING = ("\n".join(LINES) + "\n").encode()
CTM = "".join(row + "\n" for row in TEST.joinpath("timings.ctm").read_text(encoding="utf-8").splitlines()
              if row.split()[0] in {_stem(line) for line in LINES}).encode()
CLIPS = [(os.path.basename(line.split("\t")[0]), TEST.joinpath(line.split("\t")[0]).read_bytes(), "audio/flac")
         for line in LINES]


@pytest.fixture(scope="module")
def whisper(tmp_path_factory) -> Path:
    folder = shaped_whisper_folder(tmp_path_factory.mktemp("timing_upload") / "tiny-whisper")
    clear_caches()  # once: the good upload's ranking, cached, is what the later tests rank again after an error
    return folder


@pytest.fixture
def page(monkeypatch, whisper) -> AppTest:
    from attention_lens.app import registry

    monkeypatch.setattr(registry, "SOURCES", [registry.huggingface_entries])
    monkeypatch.setenv("LENS_HF_MODELS", str(whisper))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", whisper.name)
    at = AppTest.from_file(ALIGNMENT, default_timeout=300)
    at.session_state["timing_source"] = "Your clips"
    return at.run()


def put(at: AppTest, listing: bytes = LISTING, ctm: bytes | None = CTM, clips=tuple(CLIPS)) -> AppTest:
    """Upload a clip list (mylist.tsv), gold timings (gold.ctm; None: none) and clips, and run the page."""
    at.file_uploader(key="timing_list").set_value(("mylist.tsv", listing, "text/tab-separated-values"))
    at.file_uploader(key="timing_gold").set_value(None if ctm is None else ("gold.ctm", ctm, "text/plain"))
    at.file_uploader(key="timing_clips").set_value(list(clips))
    return at.run()


def rank(at: AppTest) -> AppTest:
    return at.button(key="timing_rank").click().run()


def ranked(at: AppTest) -> None:
    """The page shows a ranking of every head of the tiny Whisper (2 decoder layers x 4 heads) and no error."""
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert [m.label for m in at.metric] == ["Median word-start error", "Within 100 ms", "Words scored", "Head set"]
    assert any("chosen greedily on 2 clips (first half); figures on the 2 other clips" in c.value
               for c in at.caption)
    every = at.dataframe[1].value  # the summary, then every head, best first
    assert len(every) == 2 * 4 and list(every["median ms"]) == sorted(every["median ms"])
    assert at.selectbox(key="timing_clip").value in {c[0] for c in CLIPS[2:]}  # a reported clip's DTW view


def one_error(at: AppTest) -> str:
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "\n" not in errors[0], errors
    assert not at.metric  # nothing ranked
    return errors[0]


def test_an_upload_of_clips_and_a_ctm_ranks_every_head(page):
    at = put(page)
    assert not at.error and not at.exception
    ranked(rank(at))
    words = sum(len(line.split("\t")[1].split()) for line in LINES[2:])
    assert at.metric[2].value == str(words)  # every word of the two reported clips scored


def test_an_incomplete_upload_says_what_to_upload(page):
    at = page
    at.file_uploader(key="timing_list").set_value(("mylist.tsv", LISTING, "text/tab-separated-values")).run()
    assert not at.exception and not at.error
    assert any("Upload the clip list and the clips it names" in c.value for c in at.caption)
    assert not [b for b in at.button if b.key == "timing_rank"]


NOT_AUDIO = [(CLIPS[0][0], b"this is a text file, not a recording\n" * 20, "audio/flac"), *CLIPS[1:]]
EMPTY_CLIP = [(CLIPS[0][0], b"", "audio/flac"), *CLIPS[1:]]
STRANGER = CTM + b"test-999999 1 0.100 0.200 the\n"  # an utterance of no listed clip, on the CTM's last line
STRANGER_LINE = STRANGER.count(b"\n")


@pytest.mark.parametrize("upload,ranks,expect", [
    ({"clips": NOT_AUDIO}, True, f"{CLIPS[0][0]}: not an audio file this tool reads (WAV, FLAC, OGG, MP3)"),
    ({"ctm": STRANGER}, True, f"gold.ctm, line {STRANGER_LINE}: utterance 'test-999999' matches no clip of "
                              f"the list (1 such utterances)"),
    ({"clips": CLIPS[:2]}, False, f"mylist.tsv, line 3: the clip '{CLIPS[2][0]}' is not among the 2 clip(s) uploaded: "
                                  f"upload it too, or take its line out of the list; 1 more line(s) name clips not "
                                  f"uploaded"),
    ({"listing": b""}, False, "mylist.tsv: an empty file (0 bytes)"),
    ({"ctm": b""}, False, "gold.ctm: an empty file (0 bytes)"),
    ({"clips": EMPTY_CLIP}, False, f"{CLIPS[0][0]}: an empty file (0 bytes)"),
    ({"listing": b"\n\n"}, False, "mylist.tsv: no clip lines"),
    ({"listing": b"\xff\xfe\x00bad"}, False, "mylist.tsv: not UTF-8 text"),
    ({"ctm": None}, False, "mylist.tsv, line 1: no timings for this clip: upload gold timings (a CTM or TextGrid)"),
], ids=["not-audio", "ctm-names-a-clip-not-listed", "list-names-clips-not-uploaded", "empty-list", "empty-ctm",
        "empty-clip", "blank-list", "list-not-utf8", "no-timings"])
def test_a_bad_upload_is_one_line_and_the_good_one_ranks_after_it(page, upload, ranks, expect):
    at = put(page, **upload)
    if ranks:  # found by the ranking itself (the clip's audio, the CTM against the list)
        assert not at.error and not at.exception
        at = rank(at)
    else:  # found as soon as the files are there: no button to press
        assert not [b for b in at.button if b.key == "timing_rank"]
    assert one_error(at).startswith(expect), at.error[0].value
    ranked(rank(put(at)))  # the same page, the good files: ranked (from the cache of the first test, or anew)
