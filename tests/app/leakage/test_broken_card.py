"""Each broken variant's card (teacher-forced accuracy and free-running chrF) against the healthy model's, in
Broken models under AppTest: one column per model in order, each with its own card's
teacher-forced accuracy and free-running chrF, the no-scaling model's beside the healthy en-fr's; a share of
100% reads "100%" (four columns at 1366 px cut "100.0%" to "100.…": assets/broken-models-1366.png)."""

from __future__ import annotations

import json

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import LEAKAGE, clear_caches, page_on
from tests.fixtures.apptest import figure as chart
from tests.fixtures.checkpoints import build_leakage_trio, edit_card

CARDS = {"en-fr": {"teacher_forced_accuracy": 1.0, "exact_match": 1.0, "chrf": 100.0, "bleu": 100.0},
         "en-fr-no-causal-mask": {"teacher_forced_accuracy": 0.998, "exact_match": 0.0, "chrf": 2.4, "bleu": 0.0},
         "en-fr-no-shift": {"teacher_forced_accuracy": 0.5, "exact_match": 0.1},  # no chrF in this card
         "en-fr-no-scaling": {"teacher_forced_accuracy": 0.999, "exact_match": 0.989, "chrf": 99.78,
                              "bleu": 99.41}}


def test_the_no_scaling_card_beside_the_healthy_one(tmp_path, monkeypatch):
    folders = build_leakage_trio(tmp_path)
    folders.append(edit_card(build_tiny_checkpoint(tmp_path / "en-fr-no-scaling", seed=3, scaled=False),
                             variant="no-scaling"))
    for folder in folders:
        edit_card(folder, test_metrics=CARDS[folder.name])
    at = page_on(monkeypatch, LEAKAGE, folders, timeout=180, preset="custom", source="the cat sat .",
                 target="le chat s' assit .", leak_view="broken")
    assert not at.exception and not at.error
    assert [h.value for h in at.markdown if h.value.startswith("#### ")] == [f"#### {k}" for k in CARDS]
    # The columns draw in order: each one's two metrics are its own card's, read from card.json.
    assert [m.value for m in at.metric if m.label == "TF accuracy"] == ["100%", "99.8%", "50.0%", "99.9%"]
    assert [m.value for m in at.metric if m.label == "exact match"] == ["100%", "0.0%", "10.0%", "98.9%"]
    chrf = [c.value for c in at.caption if c.value.startswith("free-running chrF")]
    assert chrf == ["free-running chrF **100.0** · BLEU 100.0 (test split, card)",
                    "free-running chrF **2.4** · BLEU 0.0 (test split, card)",
                    "free-running chrF **99.8** · BLEU 99.4 (test split, card)"]
    assert json.loads((folders[-1] / "card.json").read_text())["variant"] == "no-scaling"
    assert any("no 1/√d_k scaling" in c.value for c in at.caption)
    chart(at, "leak_sig_en-fr-no-scaling")
    assert list(at.dataframe[0].value.columns)[1:] == list(CARDS)
    clear_caches()
