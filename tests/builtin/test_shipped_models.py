"""The shipped checkpoints do what their cards and docs/models.md promise: the references' examples, the cards'
figures."""

from __future__ import annotations

import json

import pytest
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.engine import DecodeOptions

from tests.fixtures.checkpoints import ROOT

CKPT = ROOT / "checkpoints"
EXAMPLES = {
    "en-fr": [("the cat sat .", "le chat s' assit ."),
              ("the black cat sat on the mat .", "le chat noir s' assit sur le tapis ."),
              ("the dog that the cat chased barked .", "le chien que le chat chassa aboya ."),
              ("the man found the bank .", "l' homme trouva la banque ."),
              ("the dog sat near the bank of the river .", "le chien s' assit près de la rive de la rivière .")],
    "de-en": [("Der Hund, den die Katze jagte, bellte.", "the dog that the cat chased barked ."),
              ("Der Mann fand die Bank.", "the man found the bank ."),
              ("der Hund setzte sich neben das Ufer des Flusses .", "the dog sat near the bank of the river .")],
}


def card(name: str) -> dict:
    path = CKPT / name / "card.json"
    if not path.is_file():
        pytest.skip(f"{name} is not shipped in this checkout")
    return json.loads(path.read_text())


@pytest.mark.parametrize("pair", ["en-fr", "de-en"])
def test_reference_examples_translate_exactly(pair):
    card(pair)
    engine = BuiltinEngine.load(CKPT / pair)
    for source, expected in EXAMPLES[pair]:
        trace = engine.trace(source, options=DecodeOptions())
        assert engine.detokenize([s.id for s in trace.steps]) == expected, source


@pytest.mark.parametrize("pair", ["en-fr", "de-en"])
def test_healthy_models_generalise_on_held_out_combinations(pair):
    c = card(pair)
    assert c["variant"] == "healthy" and c["trained_causal"] and c["trained_shift"]
    assert c["test_metrics"]["n"] == 1000
    assert c["test_metrics"]["exact_match"] >= 0.90
    assert c["test_metrics"]["chrf"] >= 95
    assert c["train_seconds"] <= 20 * 60


@pytest.mark.parametrize("name", ["en-fr-no-causal-mask", "en-fr-no-shift"])
def test_broken_models_look_perfect_in_teacher_forcing_and_fail_free_running(name):
    c = card(name)
    assert c["valid_metrics"]["teacher_forced_accuracy"] >= 0.99
    assert c["valid_metrics"]["exact_match"] <= 0.05
    assert c["test_metrics"]["exact_match"] <= 0.05


@pytest.mark.parametrize("name", ["en-fr", "en-fr-no-causal-mask", "en-fr-no-shift", "en-fr-no-scaling", "de-en"])
def test_every_shipped_model_is_deep_enough_to_see_heads_differ_and_small(name):
    card(name)
    cfg = json.loads((CKPT / name / "config.json").read_text())
    assert cfg["n_encoder_layers"] >= 3 and cfg["n_decoder_layers"] >= 3 and cfg["n_heads"] >= 4
    size = sum(p.stat().st_size for p in (CKPT / name).iterdir())
    assert size < 8 * 2**20


def test_the_no_scaling_model_runs_unscaled_and_its_attention_is_near_one_hot():
    """Trained without 1/sqrt(d_k): it still translates the references' examples, but every kind of
    attention is far peakier than the healthy model's (measured on the first 100 test pairs: mean row
    entropy 0.08 / 0.02 / 0.17 nats encoder / decoder / cross against 1.74 / 0.83 / 0.90)."""
    from attention_lens.model.analysis.bug_meters import sharpness

    c = card("en-fr-no-scaling")
    card("en-fr")
    assert c["variant"] == "no-scaling" and c["trained_causal"] and c["trained_shift"]
    assert json.loads((CKPT / "en-fr-no-scaling" / "config.json").read_text())["scaled"] is False
    assert c["test_metrics"]["n"] == 1000 and "chrf" in c["test_metrics"]
    healthy, unscaled = BuiltinEngine.load(CKPT / "en-fr"), BuiltinEngine.load(CKPT / "en-fr-no-scaling")
    for source, expected in EXAMPLES["en-fr"]:
        trace = unscaled.trace(source, options=DecodeOptions())
        assert unscaled.detokenize([s.id for s in trace.steps]) == expected, source
    for source, target in EXAMPLES["en-fr"]:
        a = sharpness(healthy.trace(source, target=target, options=DecodeOptions(mode="teacher_forced")))
        b = sharpness(unscaled.trace(source, target=target, options=DecodeOptions(mode="teacher_forced")))
        for kind in a.entropy:
            assert b.entropy[kind] < 0.5 * a.entropy[kind], (source, kind, a.entropy[kind], b.entropy[kind])
            assert b.top_weight[kind] > a.top_weight[kind], (source, kind)
