"""Fixtures the alignment tests share: a small gold-aligned file of the tiny checkpoint's sentences."""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.models.tiny import SOURCES, TARGETS

GOLDS = ["0-0 1-1 2?2 2-3 3-4", "0-0 1-2 2-1 3?3 3-4 4-5 5-6 6-7 7-8", "", "0-0 1-1 2-2 3-3 4-4 5-5",
         "0-0 1-1 2?2 2-3 3-4 4?5 4-6 5-7 6-8 7-9 8-10 9-11", "0-0 1-2 2-1 3-3 4-4"]


@pytest.fixture(scope="module")
def small_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("align") / "small.tsv"
    path.write_text("".join(f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLDS)), encoding="utf-8")
    return path
