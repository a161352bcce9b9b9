"""Cost of "why this token" (Explore's panel): a traced greedy decode with the logit lens (`DecodeOptions(lens=True)`)
and with gradient saliency (`saliency=True`: integrated gradients at the intervals chosen by convergence, input x
gradient, Spearman per head) against the same plain traced decode, the sides interleaved in every round.

A plain traced step costs plain_ms / m (m decoder rows). Both analyses cover every row of the run, so their
extra cost per row, over a plain step, is (with_ms - plain_ms) / plain_ms: the figure the targets are
about (lens <= 2x, integrated gradients <= 10x a plain traced step). The whole-run ratio with_ms / plain_ms is
printed too, and the intervals integrated gradients used (median and largest over the rows).

Runs on the shipped models (checkpoints/) and on the tiny Hugging Face Marian (tests/fixtures/hf_tiny.py), on the
presets' sources of each model's pair. Prints one line per model and, last, one JSON object.

    .venv/bin/python benchmarks/why_cost.py [--rounds 7] [--models en-fr de-en]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch

from model.engine import DecodeOptions, load_engine

ROOT = Path(__file__).resolve().parents[1]
SIDES = {"plain": {}, "lens": {"lens": True}, "saliency": {"saliency": True}}


def sources(pair: str) -> list[str]:
    data = json.loads((ROOT / "assets" / "presets.json").read_text(encoding="utf-8"))["presets"]
    return [p["source"] for p in data if p["pair"] == pair][:6]


def timed(engine, source: str, options: DecodeOptions):
    start = time.perf_counter()
    trace = engine.trace(source, options=options)
    return time.perf_counter() - start, trace


def measure(engine, texts: list[str], rounds: int) -> dict:
    """Per side the median over rounds of the summed seconds of every text; rows and IG intervals."""
    totals = {side: [] for side in SIDES}
    rows, intervals = 0, []
    for r in range(rounds):
        order = list(SIDES) if r % 2 == 0 else list(reversed(SIDES))
        for side in order:
            spent = 0.0
            for text in texts:
                seconds, trace = timed(engine, text, DecodeOptions(**SIDES[side]))
                spent += seconds
                if r == 0 and side == "saliency":
                    rows += trace.m
                    intervals += [s["intervals"] for s in trace.saliency["steps"]]
            totals[side].append(spent)
    med = {side: statistics.median(v) for side, v in totals.items()}
    return {"model": engine.name, "sentences": len(texts), "rows": rows, "plain_ms": med["plain"] * 1e3,
            "plain_step_ms": med["plain"] * 1e3 / rows, "lens_ms": med["lens"] * 1e3,
            "saliency_ms": med["saliency"] * 1e3,
            "lens_extra_per_step": (med["lens"] - med["plain"]) / med["plain"],
            "saliency_extra_per_step": (med["saliency"] - med["plain"]) / med["plain"],
            "lens_run_ratio": med["lens"] / med["plain"], "saliency_run_ratio": med["saliency"] / med["plain"],
            "ig_intervals_median": statistics.median(intervals), "ig_intervals_max": max(intervals)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--models", nargs="*", help="shipped checkpoints to run (default: every one)")
    args = parser.parse_args()
    torch.set_num_threads(1)
    engines = [load_engine(p) for p in sorted((ROOT / "checkpoints").iterdir())
               if (p / "card.json").is_file() and not p.name.startswith("everyday")
               and (not args.models or p.name in args.models)]
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        from tests.fixtures.hf_tiny import build_marian

        engines.append(load_engine(build_marian(Path(tmp) / "hf-marian")))
        for engine in engines:
            texts = sources(engine.card.get("pair", "en-fr"))
            engine.trace(texts[0], options=DecodeOptions(lens=True, saliency=True))  # warm-up
            r = measure(engine, texts, args.rounds)
            results.append(r)
            print(f"{r['model']:22s} {r['rows']:3d} rows  plain step {r['plain_step_ms']:6.2f} ms  lens +"
                  f"{r['lens_extra_per_step']:.2f}x  IG +{r['saliency_extra_per_step']:.2f}x per step "
                  f"(intervals median {r['ig_intervals_median']:g}, max {r['ig_intervals_max']})", flush=True)
    print(json.dumps({"worst_lens": max(r["lens_extra_per_step"] for r in results),
                      "worst_saliency": max(r["saliency_extra_per_step"] for r in results), "cases": results}))


if __name__ == "__main__":
    main()
