"""What do contributions cost? A traced decode with `DecodeOptions(contributions=True)` against the same traced
decode without, as a ratio of medians, the two sides interleaved in every round (the target: at most 1.5x).

Runs on the shipped models (checkpoints/) and on the tiny Hugging Face Marian (harness/models/hf_tiny.py),
on the presets' sources of each model's pair: greedy decoding (the Explore page's default) and teacher
forcing with the reference. Prints one line per case and, last, one JSON object.

    .venv/bin/python -m benchmarks.contrib_speed [--rounds 15]
    .venv/bin/python -m benchmarks.contrib_speed --quick     # en-fr and the tiny Marian, 2 presets, 1 round
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
from attention_lens.model.engine import DecodeOptions, load_engine

from harness.server import ROOT


def presets(pair: str) -> list[dict]:
    data = json.loads((ROOT / "assets" / "presets.json").read_text(encoding="utf-8"))["presets"]
    return [p for p in data if p["pair"] == pair]


def timed(engine, source: str, target: str | None, options: DecodeOptions) -> float:
    start = time.perf_counter()
    engine.trace(source, target, options)
    return time.perf_counter() - start


def compare(engine, cases: list[tuple[str, str | None]], mode: str, rounds: int) -> dict:
    """Median seconds over rounds of all cases, with and without contributions, interleaved."""
    plain, contrib = [], []
    options = DecodeOptions(mode=mode)
    with_c = DecodeOptions(mode=mode, contributions=True)
    for _ in range(rounds):
        for source, target in cases:
            plain.append(timed(engine, source, target, options))
            contrib.append(timed(engine, source, target, with_c))
    p, c = statistics.median(plain), statistics.median(contrib)
    return {"model": engine.name, "mode": mode, "plain_ms": p * 1e3, "contrib_ms": c * 1e3, "ratio": c / p}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--quick", action="store_true", help="en-fr and the tiny Marian, 2 presets, 1 round")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    rounds, per_model = (1, 2) if args.quick else (args.rounds, 6)
    engines = [load_engine(p) for p in sorted((ROOT / "checkpoints").iterdir()) if (p / "card.json").is_file()
               and (not args.quick or p.name == "en-fr")]
    with tempfile.TemporaryDirectory() as tmp:
        from harness.models.hf_tiny import build_marian

        engines.append(load_engine(build_marian(Path(tmp) / "hf-marian")))
        results = []
        for engine in engines:
            pair = engine.card.get("pair", "en-fr")
            rows = presets(pair)[:per_model]
            for mode in ("greedy", "teacher_forced"):
                cases = [(p["source"], p.get("target") if mode == "teacher_forced" else None) for p in rows
                         if mode == "greedy" or p.get("target")]
                if not cases:
                    continue
                engine.trace(*cases[0], DecodeOptions(mode=mode, contributions=True))  # warm-up
                r = compare(engine, cases, mode, rounds)
                results.append(r)
                print(f"{r['model']:24s} {mode:15s} plain {r['plain_ms']:7.2f} ms   with contributions "
                      f"{r['contrib_ms']:7.2f} ms   ratio {r['ratio']:.2f}", flush=True)
    print(json.dumps({"worst_ratio": max(r["ratio"] for r in results), "cases": results}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
