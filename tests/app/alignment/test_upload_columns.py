"""The Alignment page's file box: a file laid out as source<TAB>gold (the gold links where the target belongs) is
refused naming that, not teacher-forced as text ("0 scored"). (A file longer than 5,000 sentences is no longer cut:
test_alignment_upload_stream.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from attention_lens.model.analysis.alignment import parse_tsv
from streamlit.testing.v1 import AppTest

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, page_on, upload

NO_GOLD = "".join(f"{s}\t{t}\n" for s, t in zip(SOURCES, TARGETS))
SOURCE_GOLD = "the cat sat .\t0-0 1-1 2-2 3-3\nthe dog ran .\t0-0 1-1 2-2 3-3\n"


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_first_part") / "en-fr")


@pytest.fixture
def app(model, monkeypatch) -> AppTest:
    return page_on(monkeypatch, ALIGNMENT, [model], preset="custom", source=SOURCES[0], target=TARGETS[0],
                   align_n=20, timeout=240)


def said(at: AppTest) -> str:
    return " ".join(e.value for kind in ("error", "warning", "info") for e in getattr(at, kind))


def test_source_then_gold_is_refused_naming_the_gold_column(app):
    at = upload(app, SOURCE_GOLD)
    assert not at.exception
    text = " ".join(e.value for e in at.error)
    assert "gold links" in text and "line 1" in text, said(at)
    assert not [c.value for c in at.caption if "0 scored" in c.value or "sentences aligned" in c.value]


def test_parse_tsv_names_a_gold_column_in_the_target_place():
    examples, problems = parse_tsv(SOURCE_GOLD)
    assert problems and problems[0].startswith("line 1:") and "gold links" in problems[0], problems
