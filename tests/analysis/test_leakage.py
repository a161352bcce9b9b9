"""Leakage meters (model/analysis/leakage.py) on hand-built traces whose answers are known."""

from __future__ import annotations

import json

import numpy as np
from attention_lens.model.analysis.leakage import future_mass, measure, repetition, sample_report
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.trace import Step, Trace
from hypothesis import given, settings
from hypothesis import strategies as st

TARGET = ("le", "chat", "s'", "assit", "</s>")
SHIFTED = ("<s>", "le", "chat", "s'", "assit")


def make_trace(dec: np.ndarray, read: tuple[str, ...], predicted: tuple[str, ...] = TARGET,
               causal: bool = True) -> Trace:
    """A teacher-forced trace with the given decoder self-attention (L, h, m, m); the rest is uniform."""
    n_layers, heads, m, _ = dec.shape
    src = ("the", "cat", "sat", "</s>")
    n = len(src)
    return Trace(model={"name": "hand", "family": "test", "encoder_layers": 1, "decoder_layers": n_layers,
                        "heads": heads},
                 options=DecodeOptions(mode="teacher_forced", causal=causal, shift=read != SHIFTED),
                 source_tokens=src, decoder_input_tokens=read, target_tokens=predicted,
                 encoder_self_attention=np.full((1, heads, n, n), 1 / n, np.float32),
                 decoder_self_attention=dec.astype(np.float32),
                 cross_attention=np.full((n_layers, heads, m, n), 1 / n, np.float32),
                 steps=tuple(Step(t, 0, 1.0, ((t, 1.0),)) for t in predicted))


def causal_uniform(m: int) -> np.ndarray:
    w = np.tril(np.ones((m, m)))
    return w / w.sum(-1, keepdims=True)


def next_heavy(m: int, p: float) -> np.ndarray:
    """Each row puts p on the next position and the rest on itself (the last row: all on itself)."""
    w = np.eye(m) * (1 - p)
    w[np.arange(m - 1), np.arange(1, m)] = p
    w[-1, -1] = 1.0
    return w


def test_causal_attention_has_no_future_mass():
    meter = measure(make_trace(causal_uniform(5)[None, None], SHIFTED))
    assert meter.future.shape == (1, 1, 5)
    assert meter.max_future == 0.0 and (meter.next_position == 0).all()
    assert not meter.holds_answer.any() and np.isnan(meter.copy_diagonal).all()
    assert meter.max_own_answer == 0.0


def test_unmasked_cheat_shows_as_next_position_weight():
    dec = np.stack([causal_uniform(5), next_heavy(5, 0.8)])[None]  # (1, 2, 5, 5): head 2 cheats
    meter = measure(make_trace(dec, SHIFTED, causal=False))
    np.testing.assert_allclose(meter.future[0, 1], [0.8, 0.8, 0.8, 0.8, 0.0])
    np.testing.assert_allclose(meter.next_position[0], [0.0, 0.8])
    assert meter.strongest("next_position") == (0, 1, meter.next_position[0, 1])
    np.testing.assert_allclose(meter.mean_future[0], [0.0, 0.64])


def test_unshifted_copy_shows_on_the_diagonal():
    w = 0.1 * causal_uniform(5) + 0.9 * np.eye(5)  # rows still sum to 1, mostly on themselves
    meter = measure(make_trace(w[None, None], TARGET))  # read == predicted: no shift
    assert meter.holds_answer.all()
    np.testing.assert_allclose(meter.own_answer[0, 0], np.diagonal(w))
    assert abs(meter.copy_diagonal[0, 0] - np.diagonal(w).mean()) < 1e-6
    assert meter.max_future == 0.0


def test_only_rows_holding_their_answer_count():
    read = ("<s>", "le", "le", "s'", "assit")  # row 1 reads "le" but must predict "chat"; row 2 ... "s'"
    predicted = ("le", "le", "s'", "assit", "</s>")  # row 1 reads "le" and must predict "le": holds it
    meter = measure(make_trace(np.eye(5)[None, None], read, predicted))
    assert meter.holds_answer.tolist() == [False, True, False, False, False]
    assert meter.own_answer[0, 0].tolist() == [0, 1, 0, 0, 0]
    assert meter.copy_diagonal[0, 0] == 1.0


def test_meter_to_dict_is_json():
    d = json.loads(json.dumps(measure(make_trace(causal_uniform(5)[None, None], SHIFTED)).to_dict()))
    assert d["copy_diagonal_weight"] == [[None]] and d["max_future_mass"] == 0.0


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 7), st.integers(0, 10_000))
def test_future_mass_is_what_the_past_leaves(m, seed):
    rng = np.random.default_rng(seed)
    w = rng.random((2, 3, m, m))
    w /= w.sum(-1, keepdims=True)
    past = np.tril(w).sum(-1)
    np.testing.assert_allclose(future_mass(w) + past, 1.0, atol=1e-12)
    assert (future_mass(w)[..., -1] == 0).all()  # the last row has no future


def test_meters_on_engine_traces(tiny_engine):
    text, target = "the cat sat .", "le chat s' assit ."
    on = measure(tiny_engine.trace(text, target))
    off = measure(tiny_engine.trace(text, target, DecodeOptions(mode="teacher_forced", causal=False)))
    unshifted = measure(tiny_engine.trace(text, target, DecodeOptions(mode="teacher_forced", shift=False)))
    assert on.max_future == 0.0 and off.max_future > 0.0
    assert unshifted.holds_answer.all() and unshifted.max_future == 0.0
    assert free_running_future(tiny_engine, text) == 0.0


def free_running_future(engine, text: str) -> float:
    return measure(engine.trace(text, options=DecodeOptions(max_len=8))).max_future


def test_repetition():
    r = repetition(["le", "le", "le", "chat", "</s>"])
    assert (r.tokens, r.top_token, r.top_share, r.longest_run, r.repeats()) == (4, "le", 0.75, 3, True)
    r = repetition(["a", "b", "a", "c", "c", "a"])
    assert (r.top_token, r.longest_run, r.run_token, r.repeats()) == ("a", 2, "c", False)
    assert not repetition(["le", "chat", "noir", "."]).repeats()
    assert repetition([]).tokens == 0 and repetition(["</s>"]).longest_run == 0


def test_sample_report_shapes(tiny_engine):
    rep = sample_report(tiny_engine, ["the cat sat .", "a small bird sings ."],
                        ["le chat s' assit .", "un petit oiseau chante ."], causal=False, shift=True)
    assert rep.n == 2 and rep.next_position.shape == (2, 4)
    assert 0 <= rep.teacher_forced_accuracy <= 1 and 0 <= rep.repeat_share <= 1
    assert (rep.next_position > 0).all()
    d = json.loads(json.dumps(rep.to_dict()))
    assert d["strongest_next_position"]["layer"] in (1, 2)
