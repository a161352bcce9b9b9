"""How many points integrated gradients need: the completeness error of quadrature rules at fixed point counts,
and of the scheme model.engine.saliency uses, on the shipped models over the presets' sources.

For each decoder row of a greedy run the path derivative g(a) = sum_i (x_i - b_i) . grad_i f(b + a(x - b))
integrates to f(x) - f(b) exactly, so a rule's completeness error is its error on g. Printed per model, as
error / max(|f(x) - f(b)|, 1) (the tolerance's scale): median, 90th percentile, largest, and the share of rows
within the 1% tolerance, for

- the trapezoid rule on 8 ... 256 equal intervals (the previous scheme doubled these until the error was within
  tolerance: `previous` below, its points counted the way it computed them);
- Gauss-Legendre on 4 ... 64 nodes (Captum's default for integrated gradients);
- the adaptive trapezoid of model.engine.saliency at the 1% tolerance (and at 5%, the "within 5%" of
  Sundararajan et al. 2017, for comparison): the points it used and the error it reached.

Also, per row, how far each scheme's attributions lie from a reference computed at a hundredth of the
tolerance (max over tokens of |IG_i - reference_i|, on the same scale): completeness only checks the sum.

    .venv/bin/python -m benchmarks.ig_quadrature [--models en-fr de-en] [--sentences 6]

`previous_saliency` (the scheme before: trapezoid doubling from 8 intervals, one row at a time in passes of 32
points) is also what benchmarks/why_cost.py runs for its side-by-side.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from attention_lens.model.engine import DecodeOptions, load_engine
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.saliency import BASELINE, METHOD, TOLERANCE, agreement, evaluate, integrate

ROOT = Path(__file__).resolve().parents[1]
TRAPEZOID = (8, 16, 32, 64, 128, 256)
GAUSS = (4, 8, 16, 32, 64)
PREVIOUS_START, PREVIOUS_MAX, PREVIOUS_CHUNK = 8, 256, 32


# ---- the previous scheme, kept for the side-by-side ----------------------------------------------------------
@dataclass(frozen=True)
class EmbeddedStep:
    """One row on its own, as the previous scheme read it: the decoder inputs it could see and its chosen id's
    logit from them."""
    source: torch.Tensor  # (n, d) the source tokens' embeddings (before any scaling or positions)
    prefix: torch.Tensor  # (T, d) the decoder inputs row t could see (T = t + 1 with the causal mask on)
    source_baseline: torch.Tensor  # (n, d) the padding embedding in every source position
    prefix_baseline: torch.Tensor  # (T, d) the same on the target side
    logit: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]  # (B, n, d), (B, T, d) -> (B,)


def row_of(run: EmbeddedRun, t: int) -> EmbeddedStep:
    """Row t alone, its prefix cut to the inputs it read (a pass of its own: no other row shares it)."""
    T = run.seen(t)

    def logit(source: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        return run.logits(source, prefix, torch.full((source.shape[0],), t, dtype=torch.long))

    return EmbeddedStep(source=run.source, prefix=run.target[:T], source_baseline=run.source_baseline,
                        prefix_baseline=run.target_baseline[:T], logit=logit)


def _previous_points(step: EmbeddedStep, alphas: list[float]) -> tuple[np.ndarray, ...]:
    values, src_ig, pre_ig, src_ixg, pre_ixg = [], [], [], [], []
    ds, dp = step.source - step.source_baseline, step.prefix - step.prefix_baseline
    for i in range(0, len(alphas), PREVIOUS_CHUNK):
        a = torch.tensor(alphas[i:i + PREVIOUS_CHUNK], dtype=step.source.dtype)[:, None, None]
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


def previous(step: EmbeddedStep) -> dict[str, Any]:
    """The trapezoid rule on 8 equal intervals, doubled (reusing every point) until completeness holds or 256."""
    intervals = PREVIOUS_START
    values, src, pre, src_ixg, pre_ixg = _previous_points(step, [k / intervals for k in range(intervals + 1)])
    f_base, f_x = float(values[0]), float(values[-1])
    delta = f_x - f_base
    src_sum = src[1:-1].sum(0) + (src[0] + src[-1]) / 2
    pre_sum = pre[1:-1].sum(0) + (pre[0] + pre[-1]) / 2
    while True:
        ig_src, ig_pre = src_sum / intervals, pre_sum / intervals
        error = abs(float(ig_src.sum() + ig_pre.sum()) - delta)
        if error <= TOLERANCE * max(abs(delta), 1.0) or intervals >= PREVIOUS_MAX:
            break
        _, s_new, p_new, _, _ = _previous_points(step, [(2 * k + 1) / (2 * intervals) for k in range(intervals)])
        src_sum, pre_sum = src_sum + s_new.sum(0), pre_sum + p_new.sum(0)
        intervals *= 2
    return {"source": ig_src.tolist(), "prefix": ig_pre.tolist(), "source_input_x_gradient": src_ixg[-1].tolist(),
            "prefix_input_x_gradient": pre_ixg[-1].tolist(), "intervals": intervals, "logit": f_x,
            "baseline_logit": f_base, "completeness_error": error}


def previous_saliency(run: EmbeddedRun, cross_attn: np.ndarray) -> dict[str, Any]:
    """The Trace's `saliency` object as the previous scheme computed it, row by row."""
    rows = []
    for t in range(run.m):
        row = previous(row_of(run, t))
        row["spearman"] = agreement(cross_attn[:, :, t], row["source"])
        rows.append(row)
    return {"method": METHOD, "baseline": BASELINE, "tolerance": TOLERANCE, "steps": rows}


# ---- the study -----------------------------------------------------------------------------------------------
def sources(pair: str, count: int) -> list[str]:
    data = json.loads((ROOT / "assets" / "presets.json").read_text(encoding="utf-8"))["presets"]
    return [p["source"] for p in data if p["pair"] == pair][:count]


def embedded_runs(engine, texts: list[str]) -> list[EmbeddedRun]:
    """Each text decoded greedily, as the engine hands it to saliency."""
    out = []
    for text in texts:
        _, ids, _, _ = engine.prepare_source(text)
        run = engine.run_generate(ids, DecodeOptions())
        out.append(engine.embedded_run(run, DecodeOptions(), list(run.out_ids)))
    return out


def summary(values: list[float]) -> dict[str, float]:
    v = np.asarray(values)
    return {"median": float(np.median(v)), "p90": float(np.quantile(v, 0.9)), "max": float(v.max()),
            "within_tolerance": float(np.mean(v <= TOLERANCE))}


def study(runs: list[EmbeddedRun]) -> dict[str, Any]:
    errors: dict[str, list[float]] = {}
    points: dict[str, list[int]] = {}
    token_errors: dict[str, list[float]] = {}

    def note(key: str, error: float, count: int | None = None, ig: np.ndarray | None = None,
             ref: np.ndarray | None = None, scale: float = 1.0) -> None:
        errors.setdefault(key, []).append(error)
        if count is not None:
            points.setdefault(key, []).append(count)
        if ig is not None and ref is not None:
            token_errors.setdefault(key, []).append(float(np.abs(ig - ref).max()) / scale)

    gauss = {k: np.polynomial.legendre.leggauss(k) for k in GAUSS}
    grid = [k / 256 for k in range(257)]
    nodes = {k: ((x + 1) / 2, w / 2) for k, (x, w) in gauss.items()}
    for run in runs:
        new = integrate(run)
        loose = integrate(run, tolerance=0.05)
        reference = integrate(run, tolerance=TOLERANCE / 100, max_intervals=4096)
        for t in range(run.m):
            pts = [(t, a) for a in grid] + [(t, float(a)) for k in GAUSS for a in nodes[k][0]]
            got = evaluate(run, pts)
            f = np.array([v for v, _, _ in got[:257]])
            parts = np.stack([p for _, p, _ in got])
            delta = f[-1] - f[0]
            scale = max(abs(delta), 1.0)
            ref = np.array(reference[t]["source"] + reference[t]["prefix"])
            note("reference", reference[t]["completeness_error"] / scale, reference[t]["intervals"] + 1)
            trapezoid = {}
            for n in TRAPEZOID:
                w = np.full(n + 1, 1.0 / n)
                w[[0, -1]] /= 2
                ig = trapezoid[n] = w @ parts[0:257:256 // n]
                note(f"trapezoid {n}", abs(ig.sum() - delta) / scale, n + 1, ig, ref, scale)
            at = 257
            for n in GAUSS:
                ig = nodes[n][1] @ parts[at:at + n]
                at += n
                note(f"gauss-legendre {n}", abs(ig.sum() - delta) / scale, n, ig, ref, scale)
            chosen = next((n for n in TRAPEZOID if errors[f"trapezoid {n}"][-1] <= TOLERANCE), TRAPEZOID[-1])
            ig = trapezoid[chosen]
            # the previous scheme computed 9 points, then each doubling's new ones: chosen + 1 in all
            note("previous (doubling trapezoid, 1%)", abs(ig.sum() - delta) / scale, chosen + 1, ig, ref, scale)
            for key, rows in (("adaptive trapezoid, 1%", new), ("adaptive trapezoid, 5%", loose)):
                ig = np.array(rows[t]["source"] + rows[t]["prefix"])
                note(key, rows[t]["completeness_error"] / scale, rows[t]["intervals"] + 1, ig, ref, scale)
    return {key: {"rows": len(v), "error": summary(v),
                  "points": {"median": statistics.median(points[key]), "mean": float(np.mean(points[key])),
                             "max": max(points[key])} if key in points else None,
                  "token_error_vs_reference": summary(token_errors[key]) if key in token_errors else None}
            for key, v in errors.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=["en-fr", "de-en", "en-fr-no-scaling", "everyday-en-fr"],
                        help="shipped checkpoints, and hf-marian for the tiny random Hugging Face Marian")
    parser.add_argument("--sentences", type=int, default=6)
    args = parser.parse_args()
    torch.set_num_threads(1)
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in args.models:
            if name == "hf-marian":
                from harness.models.hf_tiny import build_marian

                engine = load_engine(build_marian(Path(tmp) / "hf-marian"))
            else:
                engine = load_engine(ROOT / "checkpoints" / name)
            runs = embedded_runs(engine, sources(engine.card.get("pair", "en-fr"), args.sentences))
            results[name] = study(runs)
            print(f"== {name}: {sum(r.m for r in runs)} rows; error / max(|delta|, 1): median p90 max share<=1% | "
                  f"points median mean max | max token error vs reference: median max", flush=True)
            for key, r in results[name].items():
                e, p, te = r["error"], r["points"], r["token_error_vs_reference"]
                line = f"  {key:36s} {e['median']:.4f} {e['p90']:.4f} {e['max']:.4f} {e['within_tolerance']:4.2f}"
                line += f" | {p['median']:5g} {p['mean']:6.1f} {p['max']:5d}"
                if te is not None:
                    line += f" | {te['median']:.4f} {te['max']:.4f}"
                print(line, flush=True)
    print(json.dumps(results))


if __name__ == "__main__":
    main()
