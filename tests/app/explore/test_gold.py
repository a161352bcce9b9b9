"""Explore given gold links by the Alignment page (session `explore_gold`): the stepper's packed run carries them
as cells of the cross-attention picture (the linked words' pieces, the plain reading's rows), only while Explore
shows that model, sentence and reference teacher-forced."""

from __future__ import annotations

from harness.models.tiny import SOURCES, TARGETS
from tests.fixtures.apptest import explore_on, stepper
from tests.fixtures.gold_cells import gold_cells

GOLD = "0-0 1-1 2?2 2-3 3-4"  # the cat sat . -> le chat s' assit .


def test_the_packed_run_carries_the_gold_cells_of_the_sentence_sent(tiny_ckpt, monkeypatch):
    sent = {"model": tiny_ckpt.name, "source": SOURCES[0], "target": TARGETS[0], "gold": GOLD, "reading": "plain"}
    at = explore_on(monkeypatch, [tiny_ckpt], tiny_ckpt.name, timeout=600, source=SOURCES[0], target=TARGETS[0],
                    mode="teacher_forced", explore_gold=sent)
    assert not at.exception
    header, _ = stepper(at)
    gold = header["gold"]
    assert {tuple(c) for c in gold["cells"]} == gold_cells(GOLD, header["source"], header["target"])
    assert gold["reading"] == "plain" and len(gold["links"]) == len(GOLD.split())
    at.text_input(key="target").set_value(TARGETS[0].replace("chat", "chien")).run()  # another reference
    assert "gold" not in stepper(at)[0]
