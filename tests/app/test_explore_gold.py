"""Explore given gold links by the Alignment page (session `explore_gold`): the stepper's packed run carries them
as cells of the cross-attention picture (the linked words' pieces, the plain reading's rows), only while Explore
shows that model, sentence and reference teacher-forced."""

from __future__ import annotations

from tests.fixtures.apptest import explore_on, stepper
from tests.fixtures.checkpoints import SOURCES, TARGETS

GOLD = "0-0 1-1 2?2 2-3 3-4"  # the cat sat . -> le chat s' assit .


def _words(pieces: list[str]) -> list[list[int]]:
    """Piece positions of each word (a piece starting with ▁ starts one; </s> in none), written here."""
    out: list[list[int]] = []
    for k, p in enumerate(pieces):
        if p == "</s>":
            continue
        if p.startswith("\u2581") or not out:
            out.append([k])
        else:
            out[-1].append(k)
    return out


def test_the_packed_run_carries_the_gold_cells_of_the_sentence_sent(tiny_ckpt, monkeypatch):
    sent = {"model": tiny_ckpt.name, "source": SOURCES[0], "target": TARGETS[0], "gold": GOLD, "reading": "plain"}
    at = explore_on(monkeypatch, [tiny_ckpt], tiny_ckpt.name, timeout=600, source=SOURCES[0], target=TARGETS[0],
                    mode="teacher_forced", explore_gold=sent)
    assert not at.exception
    header, _ = stepper(at)
    gold = header["gold"]
    src, tgt = _words(header["source"]), _words(header["target"])
    expected = set()
    for link in GOLD.split():
        sure = "-" in link
        i, j = (int(x) for x in link.replace("?", "-").split("-"))
        expected |= {(r, c, int(sure)) for r in tgt[j] for c in src[i]}
    assert {tuple(c) for c in gold["cells"]} == expected
    assert gold["reading"] == "plain" and len(gold["links"]) == len(GOLD.split())
    at.text_input(key="target").set_value(TARGETS[0].replace("chat", "chien")).run()  # another reference
    assert "gold" not in stepper(at)[0]
