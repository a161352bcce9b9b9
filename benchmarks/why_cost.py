"""Cost of "why this token": a traced greedy decode with the logit lens (`DecodeOptions(lens=True)`) and with
gradient saliency (`saliency=True`: integrated gradients at the points chosen by convergence, input x gradient,
Spearman per head) against the same plain traced decode, the sides interleaved in every round.

A plain traced step costs plain_ms / m (m decoder rows). Both analyses cover every row of the run, so their
extra cost per row, over a plain step, is (with_ms - plain_ms) / plain_ms, and the whole-run ratio with_ms /
plain_ms is what the targets are about (lens <= 2x, integrated gradients <= 10x a plain traced step). With
`--ig previous current` both integral schemes run side by side in the same rounds: `current` is
model.engine.saliency's, `previous` the scheme before it (trapezoid doubling from 8 intervals, row by row;
benchmarks/ig_quadrature.previous_saliency). Per scheme also the points per row (median, largest) and the
completeness error / max(|f(x) - f(b)|, 1) (median, largest).

Runs on the shipped models (checkpoints/; the everyday ones only when named) and on the tiny Hugging Face Marian
(harness/models/hf_tiny.py), on the presets' sources of each model's pair. Prints one line per model and scheme
and, last, one JSON object.

    .venv/bin/python -m benchmarks.why_cost [--rounds 7] [--models en-fr de-en] [--ig previous current]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import attention_lens.model.engine.contract as contract
import torch
from attention_lens.model.engine import DecodeOptions, load_engine

from benchmarks.ig_quadrature import previous_saliency, sources

ROOT = Path(__file__).resolve().parents[1]
SCHEMES = {"current": contract.saliency, "previous": previous_saliency}


@contextmanager
def scheme(name: str):
    """Traces made inside compute integrated gradients by this scheme (the contract calls `saliency`)."""
    kept = contract.saliency
    contract.saliency = SCHEMES[name]
    try:
        yield
    finally:
        contract.saliency = kept


def timed(engine, source: str, options: DecodeOptions):
    start = time.perf_counter()
    trace = engine.trace(source, options=options)
    return time.perf_counter() - start, trace


def measure(engine, texts: list[str], rounds: int, schemes: list[str]) -> dict:
    """Per side the median over rounds of the summed seconds of every text; rows, IG points and errors."""
    sides = {"plain": ({}, "current"), "lens": ({"lens": True}, "current"),
             **{f"ig {name}": ({"saliency": True}, name) for name in schemes}}
    totals: dict[str, list[float]] = {side: [] for side in sides}
    rows, points, errors = 0, {name: [] for name in schemes}, {name: [] for name in schemes}
    for r in range(rounds):
        order = list(sides) if r % 2 == 0 else list(reversed(sides))
        for side in order:
            options, name = sides[side]
            spent = 0.0
            with scheme(name):
                for text in texts:
                    seconds, trace = timed(engine, text, DecodeOptions(**options))
                    spent += seconds
                    if r == 0 and side == "plain":
                        rows += trace.m
                    if r == 0 and side.startswith("ig "):
                        for s in trace.saliency["steps"]:
                            points[name].append(s["intervals"] + 1)
                            scale = max(abs(s["logit"] - s["baseline_logit"]), 1.0)
                            errors[name].append(s["completeness_error"] / scale)
            totals[side].append(spent)
    med = {side: statistics.median(v) for side, v in totals.items()}
    out = {"model": engine.name, "sentences": len(texts), "rows": rows, "plain_ms": med["plain"] * 1e3,
           "plain_step_ms": med["plain"] * 1e3 / rows, "lens_ms": med["lens"] * 1e3,
           "lens_extra_per_step": (med["lens"] - med["plain"]) / med["plain"],
           "lens_run_ratio": med["lens"] / med["plain"], "ig": {}}
    for name in schemes:
        ms = med[f"ig {name}"]
        out["ig"][name] = {"ms": ms * 1e3, "run_ratio": ms / med["plain"],
                           "extra_per_step": (ms - med["plain"]) / med["plain"],
                           "points_median": statistics.median(points[name]), "points_max": max(points[name]),
                           "points_mean": statistics.fmean(points[name]),
                           "error_median": statistics.median(errors[name]), "error_max": max(errors[name])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--models", nargs="*", help="shipped checkpoints to run (default: every one but the "
                        "everyday ones)")
    parser.add_argument("--ig", nargs="+", choices=sorted(SCHEMES), default=["current"],
                        help="integral schemes to measure side by side")
    args = parser.parse_args()
    torch.set_num_threads(1)
    engines = [load_engine(p) for p in sorted((ROOT / "checkpoints").iterdir())
               if (p / "card.json").is_file() and (p.name in args.models if args.models
                                                   else not p.name.startswith("everyday"))]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        from harness.models.hf_tiny import build_marian

        engines.append(load_engine(build_marian(Path(tmp) / "hf-marian")))
        for engine in engines:
            texts = sources(engine.card.get("pair", "en-fr"), 6)
            for name in args.ig:  # warm-up
                with scheme(name):
                    engine.trace(texts[0], options=DecodeOptions(lens=True, saliency=True))
            r = measure(engine, texts, args.rounds, args.ig)
            results.append(r)
            print(f"{r['model']:22s} {r['rows']:3d} rows  plain step {r['plain_step_ms']:6.2f} ms  lens "
                  f"{r['lens_run_ratio']:.2f}x", flush=True)
            for name, ig in r["ig"].items():
                print(f"    IG {name:9s} {ig['run_ratio']:7.2f}x a plain run ({ig['ms']:7.0f} ms)  points per row "
                      f"median {ig['points_median']:g} mean {ig['points_mean']:.1f} max {ig['points_max']}  "
                      f"completeness error median {ig['error_median']:.4f} max {ig['error_max']:.4f}", flush=True)
    print(json.dumps({"worst_lens": max(r["lens_run_ratio"] for r in results),
                      "worst_ig": {name: max(r["ig"][name]["run_ratio"] for r in results) for name in args.ig},
                      "cases": results}))


if __name__ == "__main__":
    main()
