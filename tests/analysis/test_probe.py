"""The causality probe (model/analysis/probe.py) and `python -m model probe`, on the tiny random checkpoint; with the
shipped checkpoints present, their figures on the real models."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_lens.model.analysis.leakage import sample_report
from attention_lens.model.analysis.probe import LEAK_THRESHOLD, probe, replacement_ids
from attention_lens.model.cli import main
from attention_lens.model.corpora import first_test_examples
from attention_lens.model.engine import DecodeOptions, Engine, ModelInputError
from attention_lens.model.engine.loader import load_engine

from tests.fixtures.checkpoints import shipped_checkpoint

TEXT = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."
DESIGN_KEYS = {"max_past_logit_change", "future_attention_mass", "leaks"}


def test_mask_on_nothing_moves(tiny_engine):
    r = probe(tiny_engine, TEXT, TARGET)
    assert r.max_past_logit_change <= 1e-5 and not r.leaks
    assert r.future_attention_mass == 0.0
    assert len(r.position_changes) == len(r.label_tokens) == len(tiny_engine.encode_target(TARGET))


def test_mask_off_leaks(tiny_engine):
    # Random weights already mix the next position into every row: measured ~0.7 on this checkpoint.
    r = probe(tiny_engine, TEXT, TARGET, causal=False)
    assert r.max_past_logit_change > 1e-2 and r.leaks
    assert r.future_attention_mass > 0.0
    assert np.array(r.future_weight_by_head).shape == (2, 4)
    # With the shift on, the last label (end of sentence) is read by no row: replacing it moves nothing.
    assert r.position_changes[-1] <= 1e-5


def test_shift_off_leaks_even_with_the_mask(tiny_engine):
    r = probe(tiny_engine, TEXT, TARGET, shift=False)
    assert r.leaks and r.max_past_logit_change > 1e-2
    assert r.future_attention_mass == 0.0  # the mask is on: the leak is the row's own input
    assert r.position_changes[0] > LEAK_THRESHOLD  # row 0 reads label 0 itself


def test_without_target_the_greedy_output_is_probed(tiny_engine):
    r = probe(tiny_engine, TEXT)
    assert r.target_source == "greedy"
    src = tiny_engine.prepare_source(TEXT)[1]
    greedy = tiny_engine.run_generate(src, DecodeOptions()).out_ids
    assert r.label_tokens == tuple(tiny_engine.piece(i) for i in greedy)
    assert not r.leaks and probe(tiny_engine, TEXT, causal=False).leaks


def test_replacements_change_every_label_and_avoid_specials():
    specials = {0, 1, 2, 3}
    labels = [4, 5, 9, 3, 2]
    out = replacement_ids(labels, 10, specials)
    assert out == [5, 6, 4, 4, 4]
    assert all(a != b and b not in specials for a, b in zip(labels, out))


class Unbatched:
    """Any engine, seen through the base-class API only: one pass per pair, optionally no causal switch."""

    def __init__(self, inner, causal_switch: bool = True) -> None:
        self._inner = inner
        self.supports_causal_switch = causal_switch
        self.supports_shift_switch = True
        self.switch_notes = {"causal": "this family ignores custom decoder masks"}

    check_switches = Engine.check_switches  # the contract's check, on this proxy's own switch flags

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def teacher_forced_batch(self, srcs, labels, options, need_weights=True):  # one pass per pair
        return [self._inner.teacher_forced_batch([s], [lab], options, need_weights)[0] for s, lab in zip(srcs, labels)]


def test_probe_uses_only_the_engine_api(tiny_engine):
    batched = probe(tiny_engine, TEXT, TARGET, causal=False)
    plain = probe(Unbatched(tiny_engine), TEXT, TARGET, causal=False)
    np.testing.assert_allclose(plain.position_changes, batched.position_changes, atol=1e-5)
    with pytest.raises(ModelInputError, match="ignores custom decoder masks"):
        probe(Unbatched(tiny_engine, causal_switch=False), TEXT, TARGET, causal=False)


def test_to_dict_is_json_with_the_design_keys(tiny_engine):
    d = json.loads(json.dumps(probe(tiny_engine, TEXT, TARGET).to_dict()))
    assert set(d) >= DESIGN_KEYS
    assert d["leaks"] is False and d["threshold"] == LEAK_THRESHOLD


def test_cli_json_prints_one_object(tiny_ckpt, capsys):
    assert main(["probe", "--model", str(tiny_ckpt), "--text", TEXT, "--target", TARGET, "--no-causal-mask",
                 "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    d = json.loads(out)
    assert set(d) >= DESIGN_KEYS and d["leaks"] is True and d["causal"] is False
    assert main(["probe", "--model", str(tiny_ckpt), "--text", TEXT]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("PASS") and "greedy" in captured.err


def test_cli_bad_model_folder_exits_2(tmp_path, capsys):
    assert main(["probe", "--model", str(tmp_path / "nothing"), "--text", TEXT, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.startswith("error: ") and "Traceback" not in captured.err
    (tmp_path / "empty").mkdir()
    assert main(["probe", "--model", str(tmp_path / "empty"), "--text", TEXT]) == 2


def test_cli_empty_text_exits_2(tiny_ckpt, capsys):
    assert main(["probe", "--model", str(tiny_ckpt), "--text", "   "]) == 2
    assert capsys.readouterr().err.startswith("error: ")


# ---- the shipped models (their figures, with margins) --------------------------------------------------------
@pytest.fixture(scope="module")
def test_pairs():
    return first_test_examples("en-fr", 48)


def test_shipped_en_fr_leaks_nothing_with_the_mask_and_leaks_without_it():
    engine = load_engine(shipped_checkpoint("en-fr"))
    on = probe(engine, TEXT, TARGET)
    assert on.max_past_logit_change <= 1e-5 and not on.leaks
    off = probe(engine, TEXT, TARGET, causal=False)
    assert off.max_past_logit_change > 1e-2 and off.leaks


def test_shipped_no_causal_mask_looks_at_the_next_position(test_pairs):
    engine = load_engine(shipped_checkpoint("en-fr-no-causal-mask"))
    assert engine.card.get("trained_causal") is False
    rep = sample_report(engine, [e.source for e in test_pairs], [e.target for e in test_pairs], causal=False,
                        shift=True)
    assert np.nanmax(rep.next_position) >= 0.5
    assert rep.teacher_forced_accuracy > rep.exact_match + 0.3  # the silent gap


def test_shipped_no_shift_repeats_one_token(test_pairs):
    engine = load_engine(shipped_checkpoint("en-fr-no-shift"))
    assert engine.card.get("trained_shift") is False
    rep = sample_report(engine, [e.source for e in test_pairs], [e.target for e in test_pairs], causal=True,
                        shift=False)
    assert rep.repeat_share >= 0.5
    assert rep.teacher_forced_accuracy > rep.exact_match + 0.3


def test_probe_finds_a_hugging_face_engines_leaks_with_the_mask_or_the_shift_off(tmp_path):
    pytest.importorskip("transformers")
    from harness.models import hf_tiny

    engine = load_engine(hf_tiny.build_marian(tmp_path / "marian"))
    text, target = "the black dog barked at the cat .", "le chien noir aboya contre le chat ."
    on = probe(engine, text, target)
    assert on.max_past_logit_change <= 1e-5 and not on.leaks
    assert engine.supports_causal_switch  # the Marian adapter switches the mask off (tests/hf/test_hf_engine.py)
    assert probe(engine, text, target, causal=False).leaks
    assert probe(engine, text, target, shift=False).leaks
