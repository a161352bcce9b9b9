"""The gradient alignment reading (word saliency, Ding et al. 2019; model.analysis.alignment.gradient) on a gold
file: AER of every extraction under both readings, and its cost per sentence beside the raw attention's, both
measured in this one process on the same sentences.

    .venv/bin/python -m reports.gradient_aer --gold PATH/TO/hansards-en-fr.tsv \
        --model checkpoints/everyday-en-fr --json reports/gradient_aer.json

The sentences are fed as the gold file writes them (as reports/hansards_table.py does), each target teacher
forced; every extraction is counted on all of them at once (summed counts). Cost: wall and CPU seconds of
run_alignment with the raw weights (one teacher-forced pass per batch) and with the gradient reading (the same
pass, then one forward and backward pass per sentence over a copy per target piece), each run --runs times (the
last reported; default 2, the first warms up), divided by the sentences.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from attention_lens.model.analysis.alignment import run_alignment
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine.loader import load_engine

EXTRACTIONS = ("argmax", "inter", "union", "threshold0.1", "threshold0.2", "threshold0.3")
READINGS = ("plain", "shift")


def timed(engine, gold, method: str, runs: int = 2):
    """(report, wall seconds, CPU seconds) of the last of `runs` runs."""
    for _ in range(runs):
        wall, cpu = time.perf_counter(), time.process_time()
        report = run_alignment(engine, gold, method, progress=False, keep_links=False)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return report, wall, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gold", required=True)
    p.add_argument("--model", required=True)
    p.add_argument("--limit", type=int, default=0, help="only the first N sentences")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--runs", type=int, default=2, help="runs of each, the last one timed (default 2: one warm-up)")
    args = p.parse_args(argv)
    gold = read_tsv(Path(args.gold))
    gold = gold[:args.limit] if args.limit else gold
    engine = load_engine(args.model)
    raw, raw_wall, raw_cpu = timed(engine, gold, "union-plain-mean", args.runs)
    grad, grad_wall, grad_cpu = timed(engine, gold, "union-plain-mean-saliency", args.runs)
    n = grad.tally.n
    rows = []
    for reading in READINGS:
        for extract in EXTRACTIONS:
            name = f"{extract}-{reading}-mean"
            c, r = grad.tally[f"{name}-saliency"], raw.tally[name]
            rows.append({"reading": reading, "extract": extract, "saliency": round(c.aer, 4),
                         "precision": round(c.precision, 4), "recall": round(c.recall, 4),
                         "raw_mean": round(r.aer, 4)})
    out = {"model": Path(args.model).name, "gold": Path(args.gold).name, "sentences": len(gold), "n_scored": n,
           "skipped": len(grad.skipped), "rows": rows,
           "cost": {"raw_wall_s": round(raw_wall, 2), "raw_cpu_s": round(raw_cpu, 2),
                    "saliency_wall_s": round(grad_wall, 2), "saliency_cpu_s": round(grad_cpu, 2),
                    "raw_ms_per_sentence": round(1000 * raw_wall / len(gold), 1),
                    "saliency_ms_per_sentence": round(1000 * grad_wall / len(gold), 1),
                    "saliency_cpu_ms_per_sentence": round(1000 * grad_cpu / len(gold), 1)}}
    print("| reading | extraction | saliency AER | precision | recall | raw attention, mean of heads |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['reading']} | {r['extract']} | {r['saliency']:.3f} | {r['precision']:.3f} | "
              f"{r['recall']:.3f} | {r['raw_mean']:.3f} |")
    print(json.dumps(out["cost"]), file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
