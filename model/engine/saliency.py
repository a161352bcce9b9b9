"""Gradient saliency of one decoder step over the source tokens and the target prefix, beside attention.

For the token chosen at row t (decoding's choice; in teacher forcing the model's top prediction), with f its
logit as a function of the token embeddings the model reads (the engine's `embedded_step`):

- input x gradient (Shrikumar et al. 2017; Kindermans et al. 2016): x_i . df/dx_i, summed over the embedding;
- integrated gradients (Sundararajan et al. 2017): (x_i - b_i) . integral_0^1 df/dx_i(b + a(x - b)) da, with the
  baseline b the model's padding embedding in every position (source and prefix alike), the integral by the
  trapezoid rule on 2^j intervals, doubled from START until completeness holds: the attributions' sum equals
  f(x) - f(b) within TOLERANCE * max(|f(x) - f(b)|, 1) (at most MAX_STEPS intervals; the error is reported).
  Doubling the trapezoid rule reuses every earlier point, so a level costs only its new points.
- agreement with attention: per cross-attention head, Spearman's rank correlation between the row's attention
  over the source and the magnitude |IG| over the source (Jain & Wallace 2019 compare attention with gradient
  importance the same way); None where either side is constant (e.g. every source IG zero).

Trace key `saliency`: `{"method", "baseline", "tolerance", "steps": [per row {"source": [float] * n,
"prefix": [float] * T, "source_input_x_gradient", "prefix_input_x_gradient", "intervals": int, "logit": f(x),
"baseline_logit": f(b), "completeness_error": float, "spearman": [[float | None] * heads] * layers}]}`, where
T is the number of decoder inputs row t could see (t + 1 with the causal mask on, m without it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:  # annotations only: model.engine imports this module
    from model.engine.gradients import EmbeddedStep

METHOD = "integrated gradients (Sundararajan et al. 2017) and input x gradient, on the chosen token's logit"
BASELINE = "the model's padding embedding in every position"
TOLERANCE = 0.01  # completeness: |sum IG - (f(x) - f(b))| <= TOLERANCE * max(|f(x) - f(b)|, 1)
START, MAX_STEPS = 8, 256  # trapezoid intervals: first level, and the most ever used
CHUNK = 32  # interpolation points run together in one batched pass


def _points(step: EmbeddedStep, alphas: list[float]) -> tuple[np.ndarray, ...]:
    """At each alpha: f, and per source token and per prefix token (x - b) . grad f and x . grad f ->
    (A,), (A, n), (A, T), (A, n), (A, T)."""
    values, src_ig, pre_ig, src_ixg, pre_ixg = [], [], [], [], []
    ds, dp = step.source - step.source_baseline, step.prefix - step.prefix_baseline
    for i in range(0, len(alphas), CHUNK):
        a = torch.tensor(alphas[i:i + CHUNK], dtype=step.source.dtype)[:, None, None]
        with torch.enable_grad():
            s = (step.source_baseline + a * ds).requires_grad_(True)
            p = (step.prefix_baseline + a * dp).requires_grad_(True)
            f = step.logit(s, p)
            gs, gp = torch.autograd.grad(f.sum(), [s, p])
        values.append(f.detach())
        src_ig.append((gs * ds).sum(-1))
        pre_ig.append((gp * dp).sum(-1))
        src_ixg.append((gs * step.source).sum(-1))
        pre_ixg.append((gp * step.prefix).sum(-1))
    return tuple(torch.cat(x).double().numpy() for x in (values, src_ig, pre_ig, src_ixg, pre_ixg))


def integrated_gradients(step: EmbeddedStep) -> dict[str, Any]:
    """IG of one step with the number of trapezoid intervals chosen by convergence (module docstring), and
    input x gradient from the gradient at the input itself (the point alpha = 1)."""
    intervals = START
    values, src, pre, src_ixg, pre_ixg = _points(step, [k / intervals for k in range(intervals + 1)])
    f_base, f_x = float(values[0]), float(values[-1])
    delta = f_x - f_base
    # Trapezoid sums (end points at half weight); a doubling adds the odd points of the finer grid.
    src_sum = src[1:-1].sum(0) + (src[0] + src[-1]) / 2
    pre_sum = pre[1:-1].sum(0) + (pre[0] + pre[-1]) / 2
    while True:
        ig_src, ig_pre = src_sum / intervals, pre_sum / intervals
        error = abs(float(ig_src.sum() + ig_pre.sum()) - delta)
        if error <= TOLERANCE * max(abs(delta), 1.0) or intervals >= MAX_STEPS:
            break
        _, s_new, p_new, _, _ = _points(step, [(2 * k + 1) / (2 * intervals) for k in range(intervals)])
        src_sum, pre_sum = src_sum + s_new.sum(0), pre_sum + p_new.sum(0)
        intervals *= 2
    return {"source": ig_src.tolist(), "prefix": ig_pre.tolist(), "source_input_x_gradient": src_ixg[-1].tolist(),
            "prefix_input_x_gradient": pre_ixg[-1].tolist(), "intervals": intervals, "logit": f_x,
            "baseline_logit": f_base, "completeness_error": error}


def ranks(x: np.ndarray) -> np.ndarray:
    """Ranks from 1, ties given their mean rank."""
    order = np.argsort(x, kind="stable")
    r = np.empty(len(x))
    r[order] = np.arange(1, len(x) + 1)
    for v in np.unique(x):
        tied = x == v
        r[tied] = r[tied].mean()
    return r


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    """Spearman's rank correlation (Pearson's on mean ranks); None when either side is constant."""
    ra, rb = ranks(np.asarray(a, dtype=np.float64)), ranks(np.asarray(b, dtype=np.float64))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    norm = float(np.sqrt((ra * ra).sum() * (rb * rb).sum()))
    return None if norm == 0 else float((ra * rb).sum() / norm)


def agreement(cross_row: np.ndarray, source_ig: list[float]) -> list[list[float | None]]:
    """cross_row (L, h, n): every head's attention at the row -> per head Spearman with |IG| over the source."""
    magnitude = np.abs(np.asarray(source_ig))
    return [[spearman(head, magnitude) for head in layer] for layer in cross_row]


def saliency(steps: list[EmbeddedStep], cross_attn: np.ndarray) -> dict[str, Any]:
    """One EmbeddedStep per decoder row, the run's cross-attention (L, h, m, n) -> the Trace's `saliency`."""
    rows = []
    for t, step in enumerate(steps):
        row = integrated_gradients(step)
        row["spearman"] = agreement(cross_attn[:, :, t], row["source"])
        rows.append(row)
    return {"method": METHOD, "baseline": BASELINE, "tolerance": TOLERANCE, "steps": rows}


def check(d: Any, m: int, n: int) -> None:
    """Raise ValueError unless d is a saliency object for m rows over n source tokens."""
    if not isinstance(d, dict) or not isinstance(d.get("steps"), list) or len(d["steps"]) != m:
        raise ValueError(f"trace: saliency must hold one step per decoder row ({m})")
    for row in d["steps"]:
        if not isinstance(row, dict) or len(row.get("source", ())) != n \
                or len(row.get("source_input_x_gradient", ())) != n:
            raise ValueError(f"trace: saliency rows must hold one source value per source token ({n})")
