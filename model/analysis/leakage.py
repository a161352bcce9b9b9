"""Leakage meters: how much decoder self-attention lands where the answer is, read off a Trace.

Decoder row t predicts target t. In teacher forcing the decoder input holds the reference, so two places
hold row t's answer when a bug lets the row see them:

- a later position (keys k > t): with the causal mask off, key t + 1 read target t (the shift put it
  there), so an unmasked model learns to copy from the next position: its signature is a large weight on
  (t, t + 1);
- its own position: with the right shift off, row t read target t itself, so an unshifted model learns to
  copy from the diagonal: its signature is a large weight on (t, t) where input t == target t.

Meters are computed from the Trace only (docs/architecture.md: probes consume Traces, never model internals). Tokens
are compared as pieces; with the shift on, a repeated token (input t == target t by coincidence) also
counts as "holding the answer", which is rare and harmless for a meter. On a free-running trace the future
mass is 0 by construction: nothing after row t existed when row t was computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from attention_lens.model.analysis.scores import exact_match
from attention_lens.model.corpora import first_test_examples
from attention_lens.model.engine import DecodeOptions

if TYPE_CHECKING:
    from attention_lens.model.engine import Engine, Trace


def future_weights(dec_attn: np.ndarray) -> np.ndarray:
    """dec_attn (L, h, m, m) -> the same with every weight on a key at or before its query (k <= t) zeroed. Any
    (..., q, k) array of rows over positions is read the same way (the swapped cross-attention's n x m)."""
    upper = np.triu(np.ones(dec_attn.shape[-2:], dtype=bool), k=1)
    return np.where(upper, dec_attn, 0.0)


def future_mass(dec_attn: np.ndarray) -> np.ndarray:
    """dec_attn (L, h, m, m) -> (L, h, m): each row's total weight on keys after it (k > t)."""
    return future_weights(dec_attn).sum(-1)


def answer_rows(decoder_input_tokens: Sequence[str], target_tokens: Sequence[str]) -> np.ndarray:
    """(m,) bool: rows whose own decoder input is the token they must predict."""
    if len(decoder_input_tokens) != len(target_tokens):
        raise ValueError(f"{len(decoder_input_tokens)} decoder inputs but {len(target_tokens)} targets")
    return np.array([a == b for a, b in zip(decoder_input_tokens, target_tokens)], dtype=bool)


def own_answer_mass(dec_attn: np.ndarray, holds_answer: np.ndarray) -> np.ndarray:
    """dec_attn (L, h, m, m), holds_answer (m,) -> (L, h, m): the diagonal weight where the row's own
    position holds its answer, 0 elsewhere."""
    diag = np.diagonal(dec_attn, axis1=-2, axis2=-1)  # (L, h, m)
    return np.where(holds_answer, diag, 0.0)


def next_position_rows(dec_attn: np.ndarray) -> np.ndarray:
    """dec_attn (L, h, m, m) -> (L, h, m-1): the weight of each row t < m-1 on key t + 1."""
    return np.diagonal(dec_attn, offset=1, axis1=-2, axis2=-1)


def own_position_rows(dec_attn: np.ndarray, holds_answer: np.ndarray) -> np.ndarray:
    """(L, h, k): the diagonal weight of the k rows whose input is their answer."""
    return np.diagonal(dec_attn, axis1=-2, axis2=-1)[..., holds_answer]


def next_position_weight(dec_attn: np.ndarray) -> np.ndarray:
    """dec_attn (L, h, m, m) -> (L, h): mean over rows t < m-1 of the weight on key t + 1 (0 when m == 1)."""
    if dec_attn.shape[-1] < 2:
        return np.zeros(dec_attn.shape[:2])
    return next_position_rows(dec_attn).mean(-1)


def copy_diagonal_weight(dec_attn: np.ndarray, holds_answer: np.ndarray) -> np.ndarray:
    """(L, h): mean diagonal weight over the rows whose input is their answer (NaN when there is none)."""
    if not holds_answer.any():
        return np.full(dec_attn.shape[:2], np.nan)
    return own_position_rows(dec_attn, holds_answer).mean(-1)


def strongest(values: np.ndarray) -> tuple[int, int, float]:
    """(layer, head, value) of the largest entry of an (L, h) array, 0-based; (0, 0, NaN) when all is NaN."""
    if np.isnan(values).all():
        return 0, 0, float("nan")
    layer, head = np.unravel_index(int(np.nanargmax(values)), values.shape)
    return int(layer), int(head), float(values[layer, head])


@dataclass(frozen=True)
class LeakageMeter:
    """Every meter of one trace. Arrays are float64; (L, h, m) per row, (L, h) per head."""

    future: np.ndarray  # (L, h, m) weight on later keys
    own_answer: np.ndarray  # (L, h, m) weight on the row's own position where it holds the answer
    holds_answer: np.ndarray  # (m,) bool
    next_position: np.ndarray  # (L, h) signature of the unmasked model
    copy_diagonal: np.ndarray  # (L, h) signature of the unshifted model (NaN: no row holds its answer)

    def __post_init__(self) -> None:
        shape = self.future.shape
        if self.own_answer.shape != shape or self.holds_answer.shape != shape[-1:]:
            raise ValueError(f"meter shapes disagree: future {shape}, own_answer {self.own_answer.shape}, "
                             f"holds_answer {self.holds_answer.shape}")
        if self.next_position.shape != shape[:2] or self.copy_diagonal.shape != shape[:2]:
            raise ValueError("meter signatures must be (layers, heads)")

    @property
    def max_future(self) -> float:
        """The largest per-row future mass over every layer, head and row."""
        return float(self.future.max(initial=0.0))

    @property
    def mean_future(self) -> np.ndarray:
        """(L, h): per-row future mass averaged over rows."""
        return self.future.mean(-1) if self.future.shape[-1] else np.zeros(self.future.shape[:2])

    @property
    def max_own_answer(self) -> float:
        return float(self.own_answer.max(initial=0.0))

    def strongest(self, signature: str) -> tuple[int, int, float]:
        """(layer, head, value) of the largest entry of "next_position" or "copy_diagonal" (0-based)."""
        if signature not in ("next_position", "copy_diagonal"):
            raise ValueError(f"signature must be next_position or copy_diagonal, got {signature!r}")
        return strongest(self.next_position if signature == "next_position" else self.copy_diagonal)

    def to_dict(self) -> dict[str, Any]:
        def clean(a: np.ndarray) -> Any:
            return np.where(np.isnan(a), None, a).tolist() if a.dtype.kind == "f" else a.tolist()

        return {"future_mass": clean(self.future), "own_answer_mass": clean(self.own_answer),
                "holds_answer": self.holds_answer.tolist(), "next_position_weight": clean(self.next_position),
                "copy_diagonal_weight": clean(self.copy_diagonal), "max_future_mass": self.max_future,
                "max_own_answer_mass": self.max_own_answer}


def measure(trace: Trace) -> LeakageMeter:
    """Every meter of a (teacher-forced) trace."""
    w = np.asarray(trace.decoder_self_attention, dtype=np.float64)
    holds = answer_rows(trace.decoder_input_tokens, trace.target_tokens)
    return LeakageMeter(future=future_mass(w), own_answer=own_answer_mass(w, holds), holds_answer=holds,
                        next_position=next_position_weight(w), copy_diagonal=copy_diagonal_weight(w, holds))


@dataclass(frozen=True)
class Repetition:
    """How much a free-running output repeats itself (the unshifted model's collapse)."""

    tokens: int  # output length, end-of-sentence excluded
    top_token: str
    top_share: float  # occurrences of the most frequent token / tokens
    longest_run: int  # longest stretch of one token repeated back to back
    run_token: str  # the token of that stretch

    def repeats(self, run: int = 3) -> bool:
        """One token written at least `run` times in a row."""
        return self.longest_run >= run


def repetition(tokens: Sequence[str], end: str = "</s>") -> Repetition:
    toks = list(tokens)
    if toks and toks[-1] == end:
        toks = toks[:-1]
    if not toks:
        return Repetition(0, "", 0.0, 0, "")
    top, count = Counter(toks).most_common(1)[0]
    longest, run_token, run = 1, toks[0], 1
    for a, b in zip(toks, toks[1:]):
        run = run + 1 if a == b else 1
        if run > longest:
            longest, run_token = run, b
    return Repetition(len(toks), top, count / len(toks), longest, run_token)


@dataclass(frozen=True)
class SampleReport:
    """One model on a sample of sentence pairs: its attention signatures in teacher forcing (pooled over every
    row of every sentence), teacher-forced accuracy against free-running exact match, and repetition."""

    n: int
    causal: bool
    shift: bool
    next_position: np.ndarray  # (L, h) mean weight on key t + 1 over all rows t < m-1
    copy_diagonal: np.ndarray  # (L, h) mean weight on key t over rows whose input is their answer
    teacher_forced_accuracy: float
    exact_match: float
    repeat_share: float  # fraction of free-running outputs that write one piece >= 3 times in a row
    top_token_share: float  # mean share of each output taken by its most frequent token
    outputs: tuple[str, ...]  # the greedy translations

    def to_dict(self) -> dict[str, Any]:
        def best(a: np.ndarray) -> dict[str, Any]:
            layer, head, value = strongest(a)
            if np.isnan(value):
                return {"layer": None, "head": None, "value": None}
            return {"layer": layer + 1, "head": head + 1, "value": value}

        return {"n": self.n, "causal": self.causal, "shift": self.shift,
                "next_position_weight": np.where(np.isnan(self.next_position), None, self.next_position).tolist(),
                "copy_diagonal_weight": np.where(np.isnan(self.copy_diagonal), None, self.copy_diagonal).tolist(),
                "strongest_next_position": best(self.next_position),
                "strongest_copy_diagonal": best(self.copy_diagonal),
                "teacher_forced_accuracy": self.teacher_forced_accuracy, "exact_match": self.exact_match,
                "repeat_share": self.repeat_share, "top_token_share": self.top_token_share}

    def to_card(self) -> dict[str, Any]:
        """What card.json keeps (CARD_SAMPLE): to_dict() and the outputs."""
        return {**self.to_dict(), "outputs": list(self.outputs)}

    @classmethod
    def from_card(cls, d: dict[str, Any]) -> SampleReport:
        def array(rows: list) -> np.ndarray:
            return np.array([[np.nan if v is None else v for v in row] for row in rows], dtype=np.float64)

        return cls(n=d["n"], causal=d["causal"], shift=d["shift"], next_position=array(d["next_position_weight"]),
                   copy_diagonal=array(d["copy_diagonal_weight"]), teacher_forced_accuracy=d["teacher_forced_accuracy"],
                   exact_match=d["exact_match"], repeat_share=d["repeat_share"], top_token_share=d["top_token_share"],
                   outputs=tuple(d["outputs"]))


def sample_report(engine: Engine, sources: Sequence[str], targets: Sequence[str], causal: bool,
                  shift: bool) -> SampleReport:
    """Measure an engine on sentence pairs, teacher forcing in the given setting (the meters above, pooled
    over every row of every sentence), and greedy decoding."""
    if not sources or len(sources) != len(targets):
        raise ValueError(f"need as many targets as sources, and at least one ({len(sources)} / {len(targets)})")
    next_sum = copy_sum = None
    next_rows = copy_rows = correct = total = 0
    for src_text, tgt_text in zip(sources, targets):
        _, src, _, _ = engine.prepare_source(src_text)
        labels = engine.encode_target(engine.normalise_target(tgt_text))
        run = engine.run_teacher_forced(src, labels, causal, shift)
        w = run.dec_attn.astype(np.float64)  # (L, h, m, m)
        if next_sum is None:
            next_sum, copy_sum = np.zeros(w.shape[:2]), np.zeros(w.shape[:2])
        m = w.shape[-1]
        next_sum += next_position_rows(w).sum(-1)
        next_rows += m - 1
        holds = np.array(run.dec_in_ids) == np.array(run.out_ids)
        copy_sum += own_position_rows(w, holds).sum(-1)
        copy_rows += int(holds.sum())
        correct += int((run.logits.argmax(-1) == np.array(labels)).sum())
        total += len(labels)
    # Free running, one sentence at a time so that repetition is counted on the pieces the model chose
    # (a collapsed model may glue one piece to itself: "rivirivirivi" is one word but 3 tokens).
    outputs, reps = [], []
    special = engine.special_ids()
    for src_text in sources:
        out_ids = engine.run_generate(engine.prepare_source(src_text)[1], DecodeOptions(mode="greedy")).out_ids
        reps.append(repetition([engine.piece(i) for i in out_ids if i not in special]))
        outputs.append(engine.detokenize(list(out_ids)))
    nan = np.full(next_sum.shape, np.nan)
    return SampleReport(
        n=len(sources), causal=causal, shift=shift,
        next_position=next_sum / next_rows if next_rows else nan,
        copy_diagonal=copy_sum / copy_rows if copy_rows else nan,
        teacher_forced_accuracy=correct / max(total, 1),
        exact_match=exact_match(outputs, targets),
        repeat_share=sum(r.repeats() for r in reps) / len(reps),
        top_token_share=float(np.mean([r.top_share for r in reps])), outputs=tuple(outputs))


# card.json keeps the sample report on the first CARD_SAMPLE_N test pairs, teacher forcing as trained: the
# Leakage lab shows it for every visitor, and the unshifted model's free-running decodes alone take ~40 s.
CARD_SAMPLE, CARD_SAMPLE_N = "leakage_sample", 32


def card_sample(engine: Engine, pair: str) -> dict[str, Any]:
    """The sample report for card.json (CARD_SAMPLE), in the setting the engine was trained in."""
    examples = first_test_examples(pair, CARD_SAMPLE_N)
    causal, shift = engine.trained_setting
    return sample_report(engine, [e.source for e in examples], [e.target for e in examples], causal,
                         shift).to_card()

