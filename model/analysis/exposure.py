"""Training against inference on one sentence: the teacher-forced pass next to the free-running (greedy) decode.

Teacher forcing computes every row in one parallel pass, each row reading the reference prefix; generation runs
one pass per token, each row reading the model's own earlier choices. With the causal mask row t depends only on
the prefix it read, so the two programs compute the same row, up to float rounding, for as long as their
prefixes agree; from the first step where the model's choice differs from the reference, the rows part
(exposure bias: from there on generation reads inputs that training never showed it).

The naive estimate of a flawless output multiplies one per-token accuracy p over the T tokens (p^T); the
product of the per-step probabilities of the reference tokens is what the model really gives the reference.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.runs import DecodeOptions
from attention_lens.model.engine.tensors import softmax

ROW_TOLERANCE = 1e-5  # float32 rounding of the same row computed by two programs is ~1e-7


@dataclass(frozen=True)
class SideBySide:
    source_tokens: list[str]
    reference: list[str]  # m reference pieces: what teacher forcing's row t must predict
    tf_inputs: list[str]  # what each teacher-forced row read (the shifted reference)
    free_inputs: list[str]  # what each free-running row read (its own earlier choices)
    free_output: list[str]  # what each free-running row chose
    first_difference: int | None  # first row (0-based) whose inputs differ; None: they never differ
    p_tf: np.ndarray  # (m,) probability of the reference token at each teacher-forced row
    p_free: np.ndarray  # (k,) ... at each free-running row, k = rows both runs have
    row_difference: np.ndarray  # (k,) largest |difference| of the two runs' attention rows and probabilities
    tf_cross: np.ndarray  # (L, h, m, n)
    free_cross: np.ndarray  # (L, h, m_free, n)
    correct: tuple[bool, ...]  # (m,) teacher forcing's top prediction is the reference token
    causal: bool

    @property
    def shared(self) -> int:
        return len(self.row_difference)

    @property
    def equal_until(self) -> int:
        """The rows that must be equal: those before the first difference (every shared row if none)."""
        return self.shared if self.first_difference is None else min(self.first_difference, self.shared)

    @property
    def tf_accuracy(self) -> float:
        return float(np.mean(self.correct))

    @property
    def naive(self) -> float:
        """p^T with p the teacher-forced per-token accuracy on this sentence."""
        return self.tf_accuracy ** len(self.reference)

    @property
    def product_tf(self) -> float:
        return float(np.prod(self.p_tf))

    @property
    def product_free(self) -> float:
        return float(np.prod(self.p_free))


def side_by_side(engine: Engine, source: str, target: str, causal: bool = True, shift: bool = True) -> SideBySide:
    """Both runs of the engine on the same sentence (the free one greedy, as long as the engine lets it run)."""
    _, src_ids, _, _ = engine.prepare_source(source)
    labels, _ = engine.prepare_target(target)
    engine.check_switches(causal, shift)
    tf = engine.run_teacher_forced(src_ids, labels, causal, shift)
    free = engine.run_generate(src_ids, DecodeOptions(mode="greedy"))
    m, k = len(labels), min(len(labels), len(free.out_ids))
    first = next((t for t in range(k) if tf.dec_in_ids[t] != free.dec_in_ids[t]), None)
    p_tf_all, p_free_all = softmax(tf.logits.astype(np.float64)), softmax(free.logits.astype(np.float64))
    p_tf = p_tf_all[np.arange(m), labels]
    p_free = p_free_all[np.arange(k), labels[:k]]
    diffs = []
    for t in range(k):
        rows = [np.abs(tf.dec_attn[:, :, t, : t + 1] - free.dec_attn[:, :, t, : t + 1]).max(),
                np.abs(tf.cross_attn[:, :, t] - free.cross_attn[:, :, t]).max(),
                np.abs(p_tf_all[t] - p_free_all[t]).max()]
        if not causal:  # teacher forcing's row t also weighs later keys, which generation never had
            rows.append(tf.dec_attn[:, :, t, t + 1:].sum(-1).max(initial=0.0))
        diffs.append(float(max(rows)))
    return SideBySide(
        source_tokens=[engine.source_piece(i) for i in src_ids], reference=[engine.piece(i) for i in labels],
        tf_inputs=[engine.piece(i) for i in tf.dec_in_ids], free_inputs=[engine.piece(i) for i in free.dec_in_ids],
        free_output=[engine.piece(i) for i in free.out_ids], first_difference=first, p_tf=p_tf, p_free=p_free,
        row_difference=np.array(diffs), tf_cross=tf.cross_attn, free_cross=free.cross_attn,
        correct=tuple(bool(x) for x in tf.logits.argmax(-1) == np.array(labels)), causal=causal)
