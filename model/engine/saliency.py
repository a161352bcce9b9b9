"""Gradient saliency of every decoder step over the source tokens and the target prefix, beside attention.

For the token chosen at row t (decoding's choice; in teacher forcing the model's top prediction), with f its
logit as a function of the token embeddings the model reads (the engine's `embedded_run`):

- input x gradient (Shrikumar et al. 2017; Kindermans et al. 2016): x_i . df/dx_i, summed over the embedding;
- integrated gradients (Sundararajan et al. 2017): (x_i - b_i) . integral_0^1 df/dx_i(b + a(x - b)) da, with the
  baseline b the model's padding embedding in every position (source and prefix alike). The integral is the
  trapezoid rule on every point computed, the points placed where the integrand needs them: START equal
  intervals of [0, 1], each with its midpoint (2 * START + 1 points), then rounds of bisection until
  completeness holds: the attributions' sum equals f(x) - f(b) within TOLERANCE * max(|f(x) - f(b)|, 1) (at
  most MAX_INTERVALS trapezoid intervals, none narrower than MIN_WIDTH; the error is reported per row, as
  before). Which intervals a round bisects: each interval [a, c] with midpoint b has two error indicators,
  (1) exact, for the sum: a pass gives f at a point as well as the gradient, so the rule's integral of the path
  derivative g = sum_i (x_i - b_i) . df/dx_i over [a, c] must equal f(c) - f(a); (2) estimated, per token: the
  trapezoid on [a, b, c] against the one on [a, c] alone (a third of their difference, the largest over the
  tokens), since attention moving from one token to another can leave the sum smooth while two tokens' shares
  swing. Per row, the intervals with the largest indicator that together carry THETA of the row's total are
  bisected (Doerfler's marking). On the shipped models the integrand has sharp turns over a narrow band of a
  (attention switching), which equal intervals resolve only by making all of them narrow: the measured counts
  are in benchmarks/RESULTS.md (benchmarks/ig_quadrature.py). Gauss-Legendre nodes, Captum's default, were
  measured too and converge no faster on these integrands.
- the passes: every unfinished row's new points of a round go into shared batched passes (CHUNK points each,
  fewer for long inputs to a wide model: ELEMENTS; sorted by row), each point with its own row and
  interpolation; with the causal mask on a batch carries the prefix up to its last row (later inputs cannot
  reach an earlier row's logit, and their gradients are exactly zero), without it the whole target (what every
  row read).
- agreement with attention: per cross-attention head, Spearman's rank correlation between the row's attention
  over the source and the magnitude |IG| over the source (Jain & Wallace 2019 compare attention with gradient
  importance the same way); None where either side is constant (e.g. every source IG zero).

Trace key `saliency`: `{"method", "baseline", "tolerance", "steps": [per row {"source": [float] * n,
"prefix": [float] * T, "source_input_x_gradient", "prefix_input_x_gradient", "intervals": int, "logit": f(x),
"baseline_logit": f(b), "completeness_error": float, "spearman": [[float | None] * heads] * layers}]}`, where
T is the number of decoder inputs row t could see (t + 1 with the causal mask on, m without it) and
`intervals` the number of (unequal) trapezoid intervals, one fewer than the points the row's integral used.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

if TYPE_CHECKING:  # annotations only: model.engine imports this module
    from attention_lens.model.engine.gradients import EmbeddedRun

METHOD = "integrated gradients (Sundararajan et al. 2017) and input x gradient, on the chosen token's logit"
BASELINE = "the model's padding embedding in every position"
TOLERANCE = 0.01  # completeness: |sum IG - (f(x) - f(b))| <= TOLERANCE * max(|f(x) - f(b)|, 1)
START, MAX_INTERVALS = 4, 256  # the first intervals (equal, each with its midpoint: 9 points), the most
MIN_WIDTH = 2.0 ** -14  # the narrowest interval ever bisected
THETA = 0.7  # a round bisects the worst intervals that carry this share of a row's summed indicators
CHUNK = 256  # interpolation points run together in one batched pass, at most
ELEMENTS = 256 * 24 * 256  # ... and at most this many input elements (points x tokens x d_model) per pass:
# a pass keeps every layer's activations for its backward, so long inputs to a wide model go fewer at a time


@dataclass
class _Row:
    """One row's integral so far: its points and its intervals, each with its midpoint computed too."""
    points: dict[float, tuple[float, np.ndarray]] = field(default_factory=dict)  # alpha -> f, (x_i - b_i) . grad_i f
    intervals: list[tuple[float, float]] = field(default_factory=list)
    input_x_gradient: np.ndarray | None = None  # (n + T,) x_i . grad_i f at alpha = 1
    done: bool = False

    def sorted(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        alphas = sorted(self.points)
        return (np.asarray(alphas), np.asarray([self.points[a][0] for a in alphas]),
                np.stack([self.points[a][1] for a in alphas]))

    def marked(self, room: int, theta: float) -> list[int]:
        """The intervals to bisect next: the worst by their error indicator (module docstring) that carry theta
        of the row's summed indicators, at most room // 2 of them (each costs two new points)."""
        indicator = np.zeros(len(self.intervals))
        for k, (lo, hi) in enumerate(self.intervals):
            if hi - lo < 4 * MIN_WIDTH:
                continue
            (f_lo, c_lo), (_, c_mid), (f_hi, c_hi) = (self.points[a] for a in (lo, (lo + hi) / 2, hi))
            coarse, fine = (hi - lo) * (c_lo + c_hi) / 2, (hi - lo) * (c_lo + 2 * c_mid + c_hi) / 4
            exact = abs(float(fine.sum()) - (f_hi - f_lo))
            indicator[k] = max(exact, float(np.abs(fine - coarse).max()) / 3)
        total = indicator.sum()
        if total == 0 or room < 2:
            return []
        worst = np.argsort(-indicator, kind="stable")
        count = int(np.searchsorted(np.cumsum(indicator[worst]), theta * total)) + 1
        return [int(k) for k in worst[:min(count, room // 2)] if indicator[k] > 0]


def evaluate(run: EmbeddedRun, points: list[tuple[int, float]], together: bool = True,
             chunk: int = CHUNK) -> list[tuple[float, np.ndarray, np.ndarray]]:
    """At each (row, alpha): f, the row's (x_i - b_i) . grad_i f and x_i . grad_i f over its n + T inputs.

    together: points of different rows share passes (module docstring); False: each row's points run in passes
    of their own over the inputs that row read (what the engines computed per row before)."""
    out: list[Any] = [None] * len(points)
    n, d = run.source.shape
    groups: list[list[int]] = []
    for i in sorted(range(len(points)), key=lambda i: points[i]):
        t = points[i][0]
        size = min(chunk, max(1, ELEMENTS // ((n + (t + 1 if run.causal else run.m)) * d)))
        if groups and len(groups[-1]) < size and (together or points[groups[-1][0]][0] == t):
            groups[-1].append(i)
        else:
            groups.append([i])
    ds, dt = run.source - run.source_baseline, run.target - run.target_baseline
    for group in groups:
        rows = torch.tensor([points[i][0] for i in group], dtype=torch.long, device=run.source.device)
        a = torch.tensor([points[i][1] for i in group], dtype=run.source.dtype, device=run.source.device)[:, None,
                                                                                                          None]
        length = int(rows.max()) + 1 if run.causal else run.m
        with torch.enable_grad():
            s = (run.source_baseline + a * ds).requires_grad_(True)
            p = (run.target_baseline[:length] + a * dt[:length]).requires_grad_(True)
            f = run.logits(s, p, rows)
            gs, gp = torch.autograd.grad(f.sum(), [s, p])
        ig = torch.cat([(gs * ds).sum(-1), (gp * dt[:length]).sum(-1)], 1).double().cpu().numpy()
        ixg = torch.cat([(gs * run.source).sum(-1), (gp * run.target[:length]).sum(-1)], 1).double().cpu().numpy()
        values = f.detach().double().cpu().numpy()
        for k, i in enumerate(group):
            width = n + run.seen(points[i][0])
            out[i] = (float(values[k]), ig[k, :width], ixg[k, :width])
    return out


def _weights(alphas: np.ndarray) -> np.ndarray:
    """The trapezoid rule's weight of each point on the (unequal) intervals between sorted alphas."""
    h = np.diff(alphas)
    return np.concatenate([[0.0], h]) / 2 + np.concatenate([h, [0.0]]) / 2


def integrate(run: EmbeddedRun, rows: list[int] | None = None, together: bool = True, tolerance: float = TOLERANCE,
              start: int = START, max_intervals: int = MAX_INTERVALS, theta: float = THETA,
              chunk: int = CHUNK) -> list[dict[str, Any]]:
    """IG of the rows (all by default) with their intervals refined until completeness (module docstring),
    and input x gradient from the gradient at the input itself (the point alpha = 1). The keywords are the
    module's constants, open for the measurements of benchmarks/ig_quadrature.py."""
    rows = list(range(run.m)) if rows is None else rows
    state = {t: _Row(intervals=[(k / start, (k + 1) / start) for k in range(start)]) for t in rows}
    pending = [(t, k / (2 * start)) for t in rows for k in range(2 * start + 1)]
    while pending:
        for (t, alpha), (value, part, ixg) in zip(pending, evaluate(run, pending, together, chunk)):
            state[t].points[alpha] = (value, part)
            if alpha == 1.0:
                state[t].input_x_gradient = ixg
        pending = []
        for t, row in state.items():
            if row.done:
                continue
            alphas, values, parts = row.sorted()
            delta = values[-1] - values[0]
            error = abs(float(_weights(alphas) @ parts.sum(1)) - delta)
            split = [] if error <= tolerance * max(abs(delta), 1.0) else \
                row.marked(max_intervals - (len(alphas) - 1), theta)
            row.done = not split
            halves = []
            for k in split:
                lo, hi = row.intervals[k]
                mid = (lo + hi) / 2
                halves += [(lo, mid), (mid, hi)]
                pending += [(t, (lo + mid) / 2), (t, (mid + hi) / 2)]
            row.intervals = [iv for k, iv in enumerate(row.intervals) if k not in split] + halves
    results = []
    for t in rows:
        row = state[t]
        alphas, values, parts = row.sorted()
        ig = _weights(alphas) @ parts
        n = run.source.shape[0]
        ixg = row.input_x_gradient
        delta = values[-1] - values[0]
        results.append({"source": ig[:n].tolist(), "prefix": ig[n:].tolist(),
                        "source_input_x_gradient": ixg[:n].tolist(), "prefix_input_x_gradient": ixg[n:].tolist(),
                        "intervals": len(alphas) - 1, "logit": float(values[-1]), "baseline_logit": float(values[0]),
                        "completeness_error": abs(float(ig.sum()) - delta)})
    return results


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


def saliency(run: EmbeddedRun, cross_attn: np.ndarray) -> dict[str, Any]:
    """The run's rows as functions of their embeddings, its cross-attention (L, h, m, n) -> the Trace's
    `saliency`."""
    rows = integrate(run)
    for t, row in enumerate(rows):
        row["spearman"] = agreement(cross_attn[:, :, t], row["source"])
    return {"method": METHOD, "baseline": BASELINE, "tolerance": TOLERANCE, "steps": rows}


def check(d: Any, m: int, n: int) -> None:
    """Raise ValueError unless d is a saliency object for m rows over n source tokens."""
    if not isinstance(d, dict) or not isinstance(d.get("steps"), list) or len(d["steps"]) != m:
        raise ValueError(f"trace: saliency must hold one step per decoder row ({m})")
    for row in d["steps"]:
        if not isinstance(row, dict) or len(row.get("source", ())) != n \
                or len(row.get("source_input_x_gradient", ())) != n:
            raise ValueError(f"trace: saliency rows must hold one source value per source token ({n})")
