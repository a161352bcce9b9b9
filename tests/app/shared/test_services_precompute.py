"""What every visitor sees is computed once: the Leakage lab's test-split sample and the Alignment page's head
table come from the card."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from attention_lens.app import services
from attention_lens.model.analysis import alignment
from attention_lens.model.analysis.leakage import CARD_SAMPLE, CARD_SAMPLE_N, SampleReport, card_sample
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine import load_engine

CHECKPOINTS = Path(__file__).resolve().parents[3] / "checkpoints"
TRIO = ("en-fr", "en-fr-no-causal-mask", "en-fr-no-shift")
EVERYDAY_TRIO = ("everyday-en-fr", "everyday-en-fr-no-causal-mask", "everyday-en-fr-no-shift")  # trained on a file


def card(name: str) -> dict:
    return json.loads((CHECKPOINTS / name / "card.json").read_text())


@pytest.mark.parametrize("name", TRIO + EVERYDAY_TRIO)
def test_shipped_cards_hold_the_leakage_sample(name):
    kept = card(name)[CARD_SAMPLE]
    assert kept["n"] == CARD_SAMPLE_N and len(kept["outputs"]) == CARD_SAMPLE_N
    assert (kept["causal"], kept["shift"]) == (card(name)["trained_causal"], card(name)["trained_shift"])


def test_card_sample_is_what_the_measure_gives_now():
    """The kept figures are not stale: measured again (on the fast broken model), they are the same."""
    name = "en-fr-no-causal-mask"
    kept, again = card(name)[CARD_SAMPLE], card_sample(load_engine(str(CHECKPOINTS / name)), "en-fr")
    assert kept["outputs"] == again["outputs"]
    np.testing.assert_allclose(SampleReport.from_card(kept).next_position,
                               SampleReport.from_card(again).next_position, rtol=1e-6)  # float32 on another CPU
    assert {k: v for k, v in kept.items() if k.endswith(("accuracy", "match", "share"))} == pytest.approx(
        {k: v for k, v in again.items() if k.endswith(("accuracy", "match", "share"))})


def test_sample_measures_reads_the_card_and_measures_other_sizes(monkeypatch):
    calls = []

    def measured(*args):
        calls.append(args)
        raise AssertionError("measured instead of read from the card")

    services.sample_measures.clear()
    monkeypatch.setattr(services, "sample_report", measured)
    rep = services.sample_measures("en-fr-no-shift", CARD_SAMPLE_N)
    assert rep.n == CARD_SAMPLE_N and rep.repeat_share == card("en-fr-no-shift")[CARD_SAMPLE]["repeat_share"]
    assert rep.to_dict() == SampleReport.from_card(card("en-fr-no-shift")[CARD_SAMPLE]).to_dict()
    with pytest.raises(AssertionError, match="measured"):
        services.sample_measures("en-fr-no-shift", 16)  # not kept: measured (here: the stand-in raises)
    assert len(calls) == 1
    services.sample_measures.clear()


@pytest.mark.parametrize("name", EVERYDAY_TRIO)
def test_the_everyday_broken_models_view_reads_its_sample_from_the_card(monkeypatch, name):
    """Broken models on an everyday model shows the everyday trio: their sample was measured per server on the
    first open (32 free-running decodes per model, the broken ones writing until their length limit)."""
    def measured(*args):
        raise AssertionError("measured instead of read from the card")

    services.sample_measures.clear()
    monkeypatch.setattr(services, "sample_report", measured)
    rep = services.sample_measures(name, CARD_SAMPLE_N)
    assert rep.to_dict() == SampleReport.from_card(card(name)[CARD_SAMPLE]).to_dict()
    services.sample_measures.clear()


def test_a_file_trained_card_keeps_the_sample_of_its_own_test_split():
    """The kept sample is on the sentences the app would measure (the test split `train --data` held out), and not
    stale: the healthy everyday model decodes the first of them as kept."""
    from attention_lens.model.analysis.card_pages import own_test_examples, sample_of_examples

    name = "everyday-en-fr"
    engine = load_engine(str(CHECKPOINTS / name))
    examples = own_test_examples(engine.card, CARD_SAMPLE_N)
    assert [(e.source, e.target) for e in examples] == [(e.source, e.target)
                                                        for e in services.examples_of_test_split(engine, CARD_SAMPLE_N)]
    again = sample_of_examples(engine, examples[:3])
    assert again["outputs"] == card(name)[CARD_SAMPLE]["outputs"][:3]


def test_update_sample_writes_the_card_and_keeps_its_other_keys(tmp_path):
    import shutil

    from attention_lens.model.analysis.card_pages import main

    folder = tmp_path / "m"
    shutil.copytree(CHECKPOINTS / "en-fr-no-causal-mask", folder)
    before = card("en-fr-no-causal-mask")
    (folder / "card.json").write_text(json.dumps({k: v for k, v in before.items() if k != CARD_SAMPLE}, indent=2))
    assert main([str(folder)]) == 0
    after = json.loads((folder / "card.json").read_text())
    assert list(after) == [k for k in before if k != CARD_SAMPLE] + [CARD_SAMPLE]
    assert after[CARD_SAMPLE]["outputs"] == before[CARD_SAMPLE]["outputs"]


# ---- the Alignment page's head table (model.analysis.alignment.card) ------------------------------------------
ALIGN_DATA = CHECKPOINTS.parent / "assets" / "data"


@pytest.mark.parametrize("name", ("en-fr", "de-en", "en-fr-no-causal-mask", "en-fr-no-shift", "en-fr-no-scaling"))
def test_shipped_cards_hold_the_head_table_of_the_test_split(name):
    kept = card(name)[alignment.CARD_HEADS]
    pair = card(name)["pair"]
    examples = read_tsv(ALIGN_DATA / f"{pair}.test.tsv")[:alignment.CARD_HEADS_N]
    assert kept["n"] == alignment.CARD_HEADS_N and kept["fingerprint"] == alignment.card.fingerprint(examples)
    assert kept["n_scored"] > 0.9 * alignment.CARD_HEADS_N


def test_kept_head_table_is_what_scoring_gives_now():
    """Not stale: the shipped en-fr model scored again on the same sentences gives the same counts."""
    engine = load_engine(str(CHECKPOINTS / "en-fr"))
    examples = read_tsv(ALIGN_DATA / "en-fr.test.tsv")[:alignment.CARD_HEADS_N]
    kept = alignment.report_from_card(card("en-fr")[alignment.CARD_HEADS], engine, examples)
    fresh = alignment.run_alignment(engine, examples, alignment.DEFAULT_METHOD, progress=False)
    assert kept is not None and kept.tally.n == fresh.tally.n and kept.skipped == fresh.skipped
    assert [m.name for m in kept.tally.methods] == [m.name for m in fresh.tally.methods]
    np.testing.assert_array_equal(kept.tally.counts, fresh.tally.counts)


def test_kept_head_table_is_only_used_for_the_same_sentences(tiny_engine):
    engine = load_engine(str(CHECKPOINTS / "en-fr"))
    examples = read_tsv(ALIGN_DATA / "en-fr.test.tsv")[:alignment.CARD_HEADS_N]
    entry = card("en-fr")[alignment.CARD_HEADS]
    assert alignment.report_from_card(entry, engine, examples[:-1]) is None  # other n
    changed = [*examples[:-1], replace(examples[-1], gold="0-0")]
    assert alignment.report_from_card(entry, engine, changed) is None  # other gold links
    assert alignment.report_from_card(entry, tiny_engine, examples) is None  # other head layout
    assert alignment.report_from_card({**entry, "counts": "nonsense"}, engine, examples) is None
    assert alignment.report_from_card(None, engine, examples) is None


def test_alignment_report_reads_the_card_and_scores_other_sizes(monkeypatch):
    def scored(*args, **kwargs):
        raise AssertionError("scored instead of read from the card")

    services.alignment_report.clear()
    monkeypatch.setattr(alignment, "run_alignment", scored)
    data = str(ALIGN_DATA / "en-fr.test.tsv")
    report = services.alignment_report("en-fr", data, alignment.CARD_HEADS_N)
    assert report.tally.n == card("en-fr")[alignment.CARD_HEADS]["n_scored"]
    with pytest.raises(AssertionError, match="scored"):
        services.alignment_report("en-fr", data, 40)
    services.alignment_report.clear()


@pytest.mark.slow  # trains or measures a model in a fresh process
def test_eval_update_card_measures_the_head_table_again(tmp_path, capsys):
    """The path for a checkpoint trained before the card kept it: `eval --update-card` on the test split."""
    import shutil

    from attention_lens.model.cli import main

    folder = tmp_path / "m"
    shutil.copytree(CHECKPOINTS / "en-fr-no-causal-mask", folder)
    kept = card("en-fr-no-causal-mask")[alignment.CARD_HEADS]
    stripped = {k: v for k, v in card("en-fr-no-causal-mask").items() if k != alignment.CARD_HEADS}
    (folder / "card.json").write_text(json.dumps(stripped))
    assert main(["eval", "--model", str(folder), "--data", str(ALIGN_DATA / "en-fr.test.tsv"), "--update-card",
                 "--json"]) == 0
    again = json.loads((folder / "card.json").read_text())[alignment.CARD_HEADS]
    assert again["fingerprint"] == kept["fingerprint"] and again["counts"] == kept["counts"]
