"""Training against inference (model/analysis/exposure.py) on the tiny checkpoint: the teacher-forced and the
free-running rows are equal up to the first step where the prefixes differ, and differ there."""

from __future__ import annotations

import numpy as np
from attention_lens.model.analysis.exposure import side_by_side
from attention_lens.model.engine import DecodeOptions

SOURCE = "the black cat sat on the mat ."


def agreeing_reference(engine) -> str:
    """The model's own first four greedy tokens, then other words: the prefixes agree for five rows."""
    greedy = engine.trace(SOURCE, options=DecodeOptions())
    return engine.detokenize([s.id for s in greedy.steps[:4]]) + " le chat ."


def test_rows_equal_until_the_prefixes_differ(tiny_engine):
    reference = agreeing_reference(tiny_engine)
    r = side_by_side(tiny_engine, SOURCE, reference)
    first = r.first_difference
    assert first == next(t for t in range(r.shared) if r.tf_inputs[t] != r.free_inputs[t])
    assert first >= 4 and r.free_inputs[:first] == r.tf_inputs[:first]
    assert r.equal_until == first
    assert (r.row_difference[:first] < 1e-5).all()
    assert r.row_difference[first] > 1e-3
    np.testing.assert_allclose(r.p_free[:first], r.p_tf[:first], atol=1e-6)
    # The page's per-step probabilities are the teacher-forced trace's own.
    tf = tiny_engine.trace(SOURCE, reference, DecodeOptions(mode="teacher_forced"))
    np.testing.assert_allclose(r.p_tf, [s.extra["target_prob"] for s in tf.steps], rtol=1e-5)
    assert r.product_tf == float(np.prod(r.p_tf))
    assert r.naive == r.tf_accuracy ** len(r.reference)
    assert r.tf_accuracy == np.mean([s.extra["correct"] for s in tf.steps])


def test_without_the_mask_even_equal_prefixes_give_different_rows(tiny_engine):
    r = side_by_side(tiny_engine, SOURCE, agreeing_reference(tiny_engine), causal=False)
    assert r.first_difference >= 4
    assert r.row_difference[0] > 1e-3  # row 0 of teacher forcing already weighs later positions


def test_without_the_shift_the_first_row_already_differs(tiny_engine):
    r = side_by_side(tiny_engine, SOURCE, agreeing_reference(tiny_engine), shift=False)
    assert r.first_difference == 0 and r.tf_inputs[0] != r.free_inputs[0]
