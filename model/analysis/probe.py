"""The causality probe: does any decoder row's prediction depend on labels it must not see?

Definition. Teacher forcing on one (source, target) pair, in the setting under test (causal mask on / off,
right shift on / off). The target's label ids y_0 .. y_{m-1} end with end-of-sentence; decoder row i
predicts y_i. In a sound decoder row i is a function of the source and of y_<i only: that is the chain
rule P(y | x) = prod_i P(y_i | y_<i, x) which teacher forcing is meant to train (with the shift, row i
reads y_{i-1}; the causal mask stops it reading the rows after it).

For every position j = 0 .. m-1 the probe replaces the labels at positions >= j by other tokens
(deterministic: each id moves to the next non-special id of the vocabulary, never to itself) and measures
the largest absolute change of any logit at rows i <= j. Those rows may depend only on y_<i, which the
replacement left intact, so in a sound model they do not move at all. With the shift, label j is read at
decoder position j + 1, so rows <= j are exactly "the positions before the perturbed one" (docs/formats.md). Both
bugs are caught:

- causal mask missing: row i attends to position i + 1, which reads y_i (its own answer) and later labels;
- right shift missing: row i reads y_i itself, so perturbing y_j moves row j.

`max_past_logit_change` is the maximum over j. `leaks` is `max_past_logit_change > LEAK_THRESHOLD`
(1e-4): a sound model gives exactly 0 or float32 rounding noise (~1e-6 on logits of order 10, e.g. from a
different batch shape), while a real leak moves logits by 1e-2 or far more, so the threshold sits two
orders of magnitude above the noise and two below a leak.

`future_attention_mass` is the largest decoder self-attention weight any query puts on a key at a later
position (one unperturbed teacher-forced pass, same setting); the per-layer/head arrays break it down.

`bugs` (names of model.engine.bugs.BUGS, `probe --mask-after-softmax` ...) runs every pass with those switches
on. The mask applied after the softmax leaves every weight on a later key exactly 0 (future_attention_mass 0),
yet the probe finds the leak: the surviving weights were divided by a sum over every key, later ones included.

Without a target the probe uses the model's own greedy translation as the labels. It works on any Engine
through its public API; perturbed runs go through `Engine.teacher_forced_batch` without attention, one batched
pass per chunk.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from attention_lens.model.analysis.leakage import future_weights
from attention_lens.model.engine import DecodeOptions, Engine
from attention_lens.model.engine.bugs import BUGS

LEAK_THRESHOLD = 1e-4
BATCH = 32  # perturbed label sequences per teacher_forced_batch call


@dataclass(frozen=True)
class ProbeResult:
    model: str
    causal: bool
    shift: bool
    target_source: str  # "reference" | "greedy" (the model's own output, when no target was given)
    source_tokens: tuple[str, ...]
    label_tokens: tuple[str, ...]  # m: the label each decoder row predicts
    max_past_logit_change: float
    position_changes: tuple[float, ...]  # m: change at rows <= j when labels >= j are replaced
    future_attention_mass: float
    future_weight_by_head: tuple[tuple[float, ...], ...]  # (L, h): largest weight on a later key
    future_mass_by_head: tuple[tuple[float, ...], ...]  # (L, h): future mass summed per row, mean over rows
    threshold: float = LEAK_THRESHOLD
    bugs: tuple[str, ...] = ()  # the bug switches every pass ran with (model.engine.bugs)

    def __post_init__(self) -> None:
        m = len(self.label_tokens)
        if len(self.position_changes) != m:
            raise ValueError(f"probe: {len(self.position_changes)} position changes for {m} labels")
        if not np.isfinite(self.max_past_logit_change) or self.max_past_logit_change < 0:
            raise ValueError(f"probe: max_past_logit_change must be finite, >= 0: {self.max_past_logit_change}")
        if not 0.0 <= self.future_attention_mass <= 1.0 + 1e-5:
            raise ValueError(f"probe: future_attention_mass must be in [0, 1], got {self.future_attention_mass}")

    @property
    def leaks(self) -> bool:
        return self.max_past_logit_change > self.threshold

    @property
    def worst_position(self) -> int:
        """The perturbed position j whose replacement moved earlier rows most."""
        return int(np.argmax(self.position_changes)) if self.position_changes else 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "max_past_logit_change": self.max_past_logit_change,
            "future_attention_mass": self.future_attention_mass,
            "leaks": self.leaks,
            "threshold": self.threshold,
            "model": self.model,
            "causal": self.causal,
            "shift": self.shift,
            "bugs": list(self.bugs),
            "target_source": self.target_source,
            "source_tokens": list(self.source_tokens),
            "label_tokens": list(self.label_tokens),
            "position_changes": list(self.position_changes),
            "worst_position": self.worst_position,
            "future_weight_by_head": [list(r) for r in self.future_weight_by_head],
            "future_mass_by_head": [list(r) for r in self.future_mass_by_head],
        }


def replacement_ids(labels: list[int], vocab_size: int, specials: set[int]) -> list[int]:
    """Each id -> the next id (cyclically) that is neither special nor itself. Deterministic."""
    out = []
    for x in labels:
        y = x
        for _ in range(vocab_size):
            y = (y + 1) % vocab_size
            if y not in specials and y != x:
                break
        else:
            raise ValueError("probe: the vocabulary has no ordinary token to substitute")
        out.append(y)
    return out


def probe(engine: Engine, text: str, target: str | None = None, causal: bool = True,
          shift: bool = True, *, bugs: tuple[str, ...] = ()) -> ProbeResult:
    """Run the causality probe (module docstring) on one sentence; `bugs`: bug switches on in every pass."""
    unknown = sorted(set(bugs) - set(BUGS))
    if unknown:
        raise ValueError(f"probe: unknown bug switches {unknown} (known: {', '.join(BUGS)})")
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift, **dict.fromkeys(bugs, True))
    engine.check_switches(causal, shift)
    engine.check_bugs(options)
    _, src, pieces, _ = engine.prepare_source(text)
    if target is not None and target.strip():
        labels = engine.encode_target(engine.normalise_target(target))
        origin = "reference"
    else:
        labels = list(engine.run_generate(src, DecodeOptions(mode="greedy")).out_ids)
        origin = "greedy"
    base = engine.teacher_forced_batch([src], [labels], options)[0]
    vocab = base.logits.shape[-1]
    other = replacement_ids(labels, vocab, engine.special_ids())
    m = len(labels)
    # Row 0 of the batch is the unperturbed sequence again, so that it and the perturbed ones share one
    # batch shape: any difference is the model's, not a different kernel's rounding.
    variants = [list(labels)] + [labels[:j] + other[j:] for j in range(m)]
    logits: list[np.ndarray] = []
    for i in range(0, len(variants), BATCH):
        chunk = variants[i:i + BATCH]
        runs = engine.teacher_forced_batch([src] * len(chunk), chunk, options, need_weights=False)
        logits.extend(r.logits for r in runs)
    ref = logits[0].astype(np.float64)
    changes = tuple(float(np.abs(logits[j + 1][: j + 1].astype(np.float64) - ref[: j + 1]).max()) for j in range(m))
    future = future_weights(base.dec_attn.astype(np.float64))
    largest = future.max(axis=(-2, -1)) if m > 1 else np.zeros(future.shape[:2])
    mass = future.sum(-1).mean(-1)
    return ProbeResult(
        model=engine.name, causal=causal, shift=shift, target_source=origin, source_tokens=tuple(pieces),
        label_tokens=tuple(engine.piece(i) for i in labels), max_past_logit_change=max(changes, default=0.0),
        position_changes=changes, future_attention_mass=float(largest.max(initial=0.0)),
        future_weight_by_head=tuple(tuple(float(v) for v in row) for row in largest),
        future_mass_by_head=tuple(tuple(float(v) for v in row) for row in mass), bugs=options.bugs)
