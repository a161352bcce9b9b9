"""The Alignment page's file section: sentences worst first (their summed counts give the head's AER), a
sentence opened with its word matrix and gold, the breakdown plots; and, for a model of typed text, no caption
that promises a shipped test split."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from attention_lens.model.analysis.alignment import Counts

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, page_on, upload
from tests.fixtures.drawings import drawings, texts

GOLD = ["0-0 1-1 2-2 3-3", "0-0 1-1 2-2 3-3 6-4", "0-0 1-1 2-2", "0-0 1-1 2-2 4-4", "0-0 1-1 3-2"]
WITH_GOLD = "".join(f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLD))


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_sentences") / "en-fr")


def test_sentences_worst_first_sum_to_the_heads_aer_and_open_with_gold(model, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [model], preset="custom", source=SOURCES[0], target=TARGETS[0],
                 align_n=20)
    upload(at, WITH_GOLD)
    assert not at.exception
    table = at.dataframe(key="align_upload_worst").value
    assert list(table["AER"]) == sorted(table["AER"], reverse=True) and len(table) == len(GOLD)
    head = at.selectbox(key="align_upload_head").value
    ranking = at.dataframe(key="align_upload_rank").value
    row = ranking[ranking["head"] == head].iloc[0]
    total = sum((Counts(int(r.predicted), int(r.sure), 0, int(r.right)) for r in table.itertuples()), Counts())
    assert total.precision == pytest.approx(row["precision"])  # summed counts, not a mean of the rows
    worst = int(table["line"][0]) - 1
    at.session_state["align_upload_sentence"] = worst  # what a click on the first row sets (_open_worst)
    at.run()
    assert not at.exception
    titled = [texts(svg)[0] for svg in drawings(at).values()]
    assert any(t.startswith(f"Sentence {worst + 1} · word matrix") for t in titled)
    assert any("a square without a dot a sure link missed" in c.value for c in at.caption)
    bodies = [h.proto.body for h in at.get("html")]
    assert any("By token class" in b for b in bodies) and any("Attention sinks per head" in b for b in bodies)
    assert any("By reordering distance" in b for b in bodies)


def test_a_typed_text_model_is_not_promised_a_shipped_test_split(tmp_path, monkeypatch):
    folder = build_tiny_checkpoint(tmp_path / "typed")
    card = json.loads((folder / "card.json").read_text())
    card["text"] = "raw"
    (folder / "card.json").write_text(json.dumps(card))
    at = page_on(monkeypatch, ALIGNMENT, [folder], default="typed", preset="custom", source=SOURCES[0],
                 target=TARGETS[0])
    assert not at.exception
    captions = " ".join(c.value for c in at.caption)
    infos = " ".join(i.value for i in at.info)
    assert "No gold test split ships" in infos
    assert "uses the shipped test split" not in captions  # it said so above "no test split ships"
    assert "No gold test split ships for this model" in captions
