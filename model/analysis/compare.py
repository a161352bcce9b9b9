"""Two runs compared: two models on one sentence, or one model on two sentences. The difference of
their attention is defined only where rows and columns match: the same token at the same position on both
sides (a decoder row matches when it read the same token at the same position: its attention is computed
before it predicts, so two models that then predict different tokens still compare there). Everything else is
left out rather than compared across different tokens."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from attention_lens.model.engine.trace import KINDS

if TYPE_CHECKING:
    from attention_lens.model.engine.trace import Trace


def matching(a: Sequence, b: Sequence) -> list[int]:
    """Positions i < min(len(a), len(b)) where a[i] == b[i]."""
    return [i for i in range(min(len(a), len(b))) if a[i] == b[i]]


def picture(trace: Trace, kind: str, step: int, layer: int, head: int | None) -> np.ndarray:
    """The (q, k) matrix a page shows at `step` (1..m decoder rows revealed) for one head (1-based layer and
    head) or the mean over a layer's heads (head None). The encoder's is whole at every step; the decoder's
    self-attention has the keys that existed (all m in teacher forcing)."""
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}")
    w = getattr(trace, kind)[layer - 1]  # (h, q, k)
    w = w.mean(axis=0) if head is None else w[head - 1]
    if kind == "encoder_self_attention":
        return w
    keys = trace.m if kind == "decoder_self_attention" and trace.options.mode == "teacher_forced" else step
    return w[:step] if kind == "cross_attention" else w[:step, :keys]


def row_tokens(trace: Trace, kind: str, step: int) -> list:
    if kind == "encoder_self_attention":
        return list(trace.source_tokens)
    return list(trace.decoder_input_tokens[:step])


def key_tokens(trace: Trace, kind: str, step: int) -> list:
    if kind == "decoder_self_attention":
        keys = trace.m if trace.options.mode == "teacher_forced" else step
        return list(trace.decoder_input_tokens[:keys])
    return list(trace.source_tokens)


@dataclass(frozen=True)
class Difference:
    """a - b over the matching rows and columns (indices into both pictures)."""

    values: np.ndarray  # (len(rows), len(cols))
    rows: list[int]
    cols: list[int]


def difference(a: Trace, b: Trace, kind: str, step_a: int, step_b: int, layer: int,
               head: int | None) -> Difference:
    """The two pictures' difference where their rows and columns match (module docstring)."""
    wa, wb = picture(a, kind, step_a, layer, head), picture(b, kind, step_b, layer, head)
    rows = matching(row_tokens(a, kind, step_a), row_tokens(b, kind, step_b))
    cols = matching(key_tokens(a, kind, step_a), key_tokens(b, kind, step_b))
    values = (wa[np.ix_(rows, cols)].astype(np.float64) - wb[np.ix_(rows, cols)].astype(np.float64)
              if rows and cols else np.zeros((len(rows), len(cols))))
    return Difference(values, rows, cols)
