"""The Alignment page's file box: a file longer than the page reads is refused in plain words (no literal
backticks) with an offer to use its first part, which then aligns; a file laid out as source<TAB>gold (the gold
links where the target belongs) is refused naming that, not teacher-forced as text ("0 scored")."""

from __future__ import annotations

from pathlib import Path

import pytest
from attention_lens.model.analysis.alignment import parse_tsv, uploads
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ALIGNMENT, page_on, upload
from tests.fixtures.checkpoints import SOURCES, TARGETS, build_tiny_checkpoint

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


def test_a_long_file_is_offered_its_first_part(app, monkeypatch):
    monkeypatch.setattr(uploads, "MAX_LINES", 3)
    at = upload(app, NO_GOLD)
    assert not at.exception
    text = said(at)
    assert f"{len(SOURCES)} sentences" in text and "3" in text, text
    assert "`" not in text and "&#96;" not in text, text
    use = [b for b in at.button if b.key == "align_first_part"]
    assert use and "first 3" in use[0].label
    use[0].click()
    at = at.run()
    assert not at.exception
    assert any(c.value.startswith("3 of 3 sentences aligned") for c in at.caption), [c.value for c in at.caption]


def test_source_then_gold_is_refused_naming_the_gold_column(app):
    at = upload(app, SOURCE_GOLD)
    assert not at.exception
    text = " ".join(e.value for e in at.error)
    assert "gold links" in text and "line 1" in text, said(at)
    assert not [c.value for c in at.caption if "0 scored" in c.value or "sentences aligned" in c.value]


def test_parse_tsv_names_a_gold_column_in_the_target_place():
    examples, problems = parse_tsv(SOURCE_GOLD)
    assert problems and problems[0].startswith("line 1:") and "gold links" in problems[0], problems
