"""AER of the shipped models read off raw, norm-weighted and rollout cross-attention, and how the head
ranking by ablation compares with the per-head AER.

    .venv/bin/python -m reports.aer_readings [--pairs en-fr de-en] [--limit N] [--heads-limit 200]

Part 1, per pair: the whole test split (`assets/data/PAIR.test.tsv`), `union` and `argmax` extraction over the
mean of every cross head, plain and shift-aware readings, for each of the three weights (one alignment pass per
weights: the scorer counts every method at once). The same figures as
`python -m model align --model checkpoints/PAIR --data assets/data/PAIR.test.tsv --method union-plain-mean-norm`.

Part 2, per pair: every cross head's AER (argmax, plain reading) next to its ablation cost (the teacher-forced
loss increase when it alone is off, `python -m model heads`, on the first --heads-limit test pairs), and the
cost of switching off the two best-aligning heads together against the sum of their costs alone (redundancy).
Prints markdown.
"""

from __future__ import annotations

import argparse
from dataclasses import replace
from pathlib import Path

import torch
from attention_lens.model.analysis.ablation import rank_heads, ranking_options
from attention_lens.model.analysis.alignment import run_alignment
from attention_lens.model.analysis.alignment.methods import Method
from attention_lens.model.analysis.scores import source_ids, teacher_forced_totals
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine.loader import load_engine

ROOT = Path(__file__).resolve().parent.parent

WEIGHTS = (("raw", ""), ("norm", "-norm"), ("rollout", "-rollout"))


def readings_table(engine, rows) -> tuple[list[str], dict]:
    lines = ["| method | weights | plain | shift-aware |", "|---|---|---|---|"]
    tallies = {}
    for weights, suffix in WEIGHTS:
        report = run_alignment(engine, rows, f"union-plain-mean{suffix}", progress=False)
        tallies[weights] = report.tally
    for extract in ("union", "argmax"):
        for weights, suffix in WEIGHTS:
            t = tallies[weights]
            plain = t[Method(extract, "plain", weights=weights)].aer
            shift = t[Method(extract, "shift", weights=weights)].aer
            lines.append(f"| `{extract}-…-mean{suffix}` | {weights} | {plain:.3f} | {shift:.3f} |")
    return lines, tallies


def heads_table(engine, rows, raw_tally, limit: int) -> list[str]:
    sources, targets = [r.source for r in rows[:limit]], [r.target for r in rows[:limit]]
    ranking = rank_heads(engine, sources, targets, progress=False)
    cost = {(h["kind"], h["layer"], h["head"]): h["loss_increase"] for h in ranking["heads"]}
    order = {key: k + 1 for k, key in enumerate(cost)}
    aer = {(li, hi): raw_tally[Method("argmax", "plain", li, hi)].aer
           for li in range(1, engine.n_decoder_layers + 1) for hi in range(1, engine.n_heads + 1)}
    lines = [f"base loss {ranking['base_loss']:.4f} nats/token on {len(sources)} test pairs", "",
             "| cross head | AER (argmax, plain) | AER rank | loss increase alone | ablation rank (all 36 heads) |",
             "|---|---|---|---|---|"]
    by_aer = sorted(aer, key=aer.get)
    for li, hi in by_aer:
        key = ("cross", li, hi)
        lines.append(f"| L{li}H{hi} | {aer[(li, hi)]:.3f} | {by_aer.index((li, hi)) + 1} | "
                     f"{cost[key]:+.4f} | {order[key]} |")
    srcs = [source_ids(engine, s) for s in sources]
    labels = [engine.prepare_target(t)[0] for t in targets]
    (l1, h1), (l2, h2) = by_aer[:2]
    off = replace(ranking_options(engine), ablate=(f"cross:{l1}:{h1}", f"cross:{l2}:{h2}"))
    both = teacher_forced_totals(engine, srcs, labels, off).loss
    together = both - ranking["base_loss"]
    alone = cost[("cross", l1, h1)] + cost[("cross", l2, h2)]
    top = [f"{h['kind']} L{h['layer']}H{h['head']} ({h['loss_increase']:+.4f})" for h in ranking["heads"][:6]]
    lines += ["", f"largest ablation costs: {', '.join(top)}",
              f"the two best aligners L{l1}H{h1} + L{l2}H{h2} off together: {together:+.4f} "
              f"(sum alone {alone:+.4f}; ratio {together / alone if alone > 0 else float('nan'):.1f}x)"]
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=["en-fr", "de-en"])
    parser.add_argument("--limit", type=int, default=0, help="test sentences for part 1 (0: all)")
    parser.add_argument("--heads-limit", type=int, default=200)
    args = parser.parse_args()
    torch.set_num_threads(1)
    for pair in args.pairs:
        engine = load_engine(ROOT / "checkpoints" / pair)
        rows = read_tsv(ROOT / "assets" / "data" / f"{pair}.test.tsv")
        if args.limit:
            rows = rows[: args.limit]
        print(f"## {pair} ({len(rows)} test sentences; {engine.card.get('steps')} training steps)\n")
        lines, tallies = readings_table(engine, rows)
        print("\n".join(lines) + "\n", flush=True)
        print("\n".join(heads_table(engine, rows, tallies["raw"], args.heads_limit)) + "\n", flush=True)


if __name__ == "__main__":
    main()
