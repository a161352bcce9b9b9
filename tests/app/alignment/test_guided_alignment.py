"""A model trained with guided alignment on the Alignment and Compare pages: the Alignment page names its
supervised head and one click reads it; Compare puts the healthy and the aligned model side by side on that
head; a model without an aligned partner shows neither."""

from __future__ import annotations

import pytest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, ROOT, page_on
from tests.fixtures.checkpoints import edit_card

COMPARE = str(ROOT / "app" / "screens" / "compare.py")
GUIDED = {"layer": 2, "head": 1, "reading": "shift", "method": "argmax-shift-L2H1", "aligner": "eflomal",
          "hansards": {"aer": 0.25, "start_same_head": 0.8, "start_best_head": 0.6}}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("aligned_models")
    healthy = build_tiny_checkpoint(root / "tiny")
    aligned = edit_card(build_tiny_checkpoint(root / "tiny-aligned", seed=1), guided_alignment=GUIDED)
    lonely = build_tiny_checkpoint(root / "lonely", seed=2)
    return healthy, aligned, lonely


def test_alignment_page_names_the_supervised_head_and_reads_it(models, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, list(models), default="tiny-aligned")
    assert not at.exception
    box = " ".join(i.value for i in at.info)
    assert "layer 2 head 1" in box and "argmax-shift-L2H1" in box and "0.250" in box and "0.800" in box
    at.button(key="aligned_read_head").click().run()
    state = at.session_state
    assert (state["align_reading"], state["align_extract"], state["align_layer"], state["align_head"]) == (
        "shift", "argmax", 2, 1)


def test_alignment_page_of_a_model_without_guided_alignment_shows_no_box(models, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, list(models), default="tiny")
    assert not at.exception
    assert not [b for b in at.button if b.key == "aligned_read_head"]


def test_compare_puts_healthy_against_aligned_on_the_supervised_head(models, monkeypatch):
    at = page_on(monkeypatch, COMPARE, list(models), default="tiny")
    assert not at.exception
    at.button(key="cmp_aligned_pair").click().run()
    assert not at.exception
    state = at.session_state
    assert (state["cmp_b_model"], state["cmp_kind"], state["cmp_layer"], state["cmp_head"]) == (
        "tiny-aligned", "cross", 2, 1)
    assert state["cmp_b_text"] == state["cmp_a_text"]


def test_compare_offers_no_pair_for_a_model_without_one(models, monkeypatch):
    at = page_on(monkeypatch, COMPARE, list(models), default="lonely")
    assert not at.exception
    assert not [b for b in at.button if b.key == "cmp_aligned_pair"]
