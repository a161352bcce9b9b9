"""The gradient reading of an alignment: word saliency (Ding, Xu & Koehn 2019, "Saliency-driven word alignment
interpretation for neural machine translation").

For a teacher-forced sentence, row t predicts label t (the reference piece). Its saliency over source piece i is
the embedding times the gradient of the label's probability with respect to that embedding:

    s[t, i] = e(x_i) . d p(y_t | x, y_<t) / d e(x_i)

(e: the piece's embedding row as the model reads it, before any scaling and positions; the dot product runs over
the embedding). This is Ding et al.'s "vanilla" word saliency, without SmoothGrad's noise samples. A positive
value means the piece raises the label's probability; the reading keeps the positive part and normalises each
row to sum 1 (a row with no positive value stays zero), so the word-level matrix is read exactly as attention is
(model.analysis.alignment: source pieces summed per word, rows averaged per target word, special pieces
dropped) and every extraction applies; `argmax` is Ding et al.'s alignment (each target word to its most
salient source word).

Every row of a sentence comes from one batched forward and backward pass: the batch holds one copy of the
sentence per row (the engine's EmbeddedRun), each copy's output is its own row's probability, so one backward
gives every row's gradient (no copy reads another's input). Long sentences go in several passes (ELEMENTS).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import torch
from attention_lens.model.engine import ModelInputError

if TYPE_CHECKING:
    from attention_lens.model.engine import DecodeOptions, Engine
    from attention_lens.model.engine.gradients import EmbeddedRun
    from attention_lens.model.engine.runs import RawRun

METHOD = "word saliency (Ding et al. 2019): embedding . gradient of the reference piece's probability"
ELEMENTS = 64 * 64 * 512  # rows x source pieces x embedding width per pass, at most (its activations are kept)


def embedded(engine: Engine, run: RawRun, options: DecodeOptions) -> EmbeddedRun:
    """The run's rows as a function of their embeddings, each ending at its reference label's probability."""
    er = engine.embedded_run(run, options, [int(i) for i in run.out_ids])
    if er.probabilities is None:
        raise ModelInputError(f"{engine.name}: this {engine.family} model gives no probabilities from its "
                              f"embeddings, so the gradient (saliency) reading is not available")
    return er


def saliency_rows(er: EmbeddedRun) -> np.ndarray:
    """(m, n) float64: s[t, i] = e(x_i) . d p_t / d e(x_i) (module docstring), signed."""
    n, d = er.source.shape
    m = er.m
    out = np.zeros((m, n))
    step = max(1, ELEMENTS // max(1, n * d))
    source = er.source.detach()
    for start in range(0, m, step):
        rows = torch.arange(start, min(m, start + step), device=source.device)
        length = int(rows[-1]) + 1 if er.causal else m  # a causal row reads the prefix up to itself
        with torch.enable_grad():
            s = source.expand(len(rows), n, d).clone().requires_grad_(True)
            p = er.target.detach()[:length].expand(len(rows), length, d)
            prob = er.probabilities(s, p, rows)
            (grad,) = torch.autograd.grad(prob.sum(), [s])
        out[start:start + len(rows)] = (grad * source).sum(-1).double().cpu().numpy()
    return out


def reading(saliency: np.ndarray) -> np.ndarray:
    """Signed (m, n) saliency -> the reading: positive part, each row normalised to sum 1 (0 where none)."""
    positive = np.clip(saliency, 0.0, None)
    total = positive.sum(axis=-1, keepdims=True)
    return np.divide(positive, total, out=np.zeros_like(positive), where=total > 0)


def gradient_reading(engine: Engine, run: RawRun, options: DecodeOptions) -> np.ndarray:
    """(1, 1, m, n): one teacher-forced run's gradient reading, shaped as one head's cross-attention."""
    return reading(saliency_rows(embedded(engine, run, options)))[None, None]
