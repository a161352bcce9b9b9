"""Alignment quality of the shipped models on their test splits, as markdown for the note.

    .venv/bin/python -m reports.alignment_report [--pairs en-fr de-en] [--limit N] [--split test]

For each model: `best` chosen on the valid split (regenerated, deterministic) and scored on the test split;
the best of each reading; `best` chosen on the first half of the test split and scored on the second; the
default method; AER / precision / recall of every extraction under both readings (plain, shift-aware) for
the mean over all heads, the best layer mean and the best single head (these three chosen on the test split
itself: descriptive, not held-out); and the per-head AER tables (argmax, both readings).
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
import torch
from attention_lens.model.analysis.alignment import DEFAULT_METHOD, READINGS, Method, Tally, run_alignment
from attention_lens.model.corpora import generate, read_tsv
from attention_lens.model.engine.loader import load_engine

ROOT = Path(__file__).resolve().parent.parent


def _best(tally: Tally, **fixed) -> Method:
    """The lowest-AER counted method whose fields equal `fixed` (layer/head: "head" = any single head,
    "layer" = any layer mean)."""
    kind = fixed.pop("kind")
    ok = [m for m in tally.methods if all(getattr(m, k) == v for k, v in fixed.items())
          and (kind == "mean" and m.layer is None or kind == "layer" and m.layer is not None and m.head is None
               or kind == "head" and m.head is not None)]
    return min(ok, key=lambda m: tally[m].aer)


def extraction_table(tally: Tally) -> list[str]:
    out = ["| extraction | reading | mean of all heads: AER / P / R | best layer mean | best single head |",
           "|---|---|---|---|---|"]
    extracts = [("argmax", None), ("inter", None), ("union", None)] + [("threshold", t) for t in tally.thresholds]
    for extract, tau in extracts:
        for reading in READINGS:
            cells = []
            for kind in ("mean", "layer", "head"):
                fixed = {"extract": extract, "reading": reading, "kind": kind}
                if tau is not None:
                    fixed["threshold"] = tau
                m = _best(tally, **fixed)
                c = tally[m]
                where = "" if kind == "mean" else f" ({m.selector})"
                cells.append(f"{c.aer:.3f} / {c.precision:.3f} / {c.recall:.3f}{where}")
            name = extract if tau is None else f"threshold τ={tau:g}"
            out.append(f"| {name} | {reading} | " + " | ".join(cells) + " |")
    return out


def head_table(tally: Tally, extract: str, reading: str) -> list[str]:
    heads = tally.heads
    out = ["| layer | " + " | ".join(f"H{h}" for h in range(1, heads + 1)) + " | layer mean |",
           "|---" * (heads + 2) + "|"]
    grid = np.zeros((tally.layers, heads))
    for li in range(1, tally.layers + 1):
        row = [tally[Method(extract, reading, li, hi)].aer for hi in range(1, heads + 1)]
        grid[li - 1] = row
        best = min(row)
        cells = [f"**{a:.3f}**" if a == best else f"{a:.3f}" for a in row]
        out.append(f"| L{li} | " + " | ".join(cells) + f" | {tally[Method(extract, reading, li)].aer:.3f} |")
    li, hi = np.unravel_index(grid.argmin(), grid.shape)
    out.append(f"\nmean of all heads: {tally[Method(extract, reading)].aer:.3f}; best head L{li + 1}H{hi + 1} "
               f"at {grid.min():.3f}")
    return out


def report(pair: str, split: str, limit: int) -> list[str]:
    folder = ROOT / "checkpoints" / pair
    if not (folder / "card.json").is_file():
        return [f"## {pair}\n", f"checkpoints/{pair} has no card.json yet: not measured.\n"]
    data = ROOT / "assets" / "data" / f"{pair}.{split}.tsv"
    rows = read_tsv(data)
    if limit:
        rows = rows[:limit]
    engine = load_engine(folder)
    valid = generate(pair, n_train=0)["valid"]
    start = time.perf_counter()
    rep = run_alignment(engine, rows, "best", progress=True, select_on=valid)
    seconds = time.perf_counter() - start
    s = rep.summary()
    half = run_alignment(engine, rows, "best", progress=False).summary()
    default = rep.tally[Method.parse(DEFAULT_METHOD)]
    tally = rep.tally
    lines = [f"## {pair}\n",
             f"`{data.relative_to(ROOT)}`: {len(rows)} sentences, {tally.n} scored, {len(rep.skipped)} skipped; "
             f"model {engine.n_decoder_layers} decoder layers × {engine.n_heads} heads; {seconds:.1f} s "
             f"(selection pass on the valid split included).\n",
             f"- **best, chosen on the valid split** ({s['selection']['chosen_on']} sentences), scored on the test "
             f"split: `{s['method']}` AER **{s['aer']:.3f}**, precision {s['precision']:.3f}, recall "
             f"{s['recall']:.3f}.",
             "- best per reading (same protocol): " + "; ".join(
                 f"{r} `{v['method']}` AER {v['aer']:.3f} (P {v['precision']:.3f}, R {v['recall']:.3f})"
                 for r, v in s["readings"].items()) + ".",
             f"- best chosen on the first half of the test split, scored on the second half: `{half['method']}` "
             f"AER {half['aer']:.3f}.",
             f"- the default method `{DEFAULT_METHOD}` (no head selection): AER {default.aer:.3f}, precision "
             f"{default.precision:.3f}, recall {default.recall:.3f}.\n",
             "### Every extraction (AER / precision / recall on all scored sentences)\n",
             *extraction_table(tally), ""]
    for reading in READINGS:
        lines += [f"### AER per head: argmax, {reading} reading\n", *head_table(tally, "argmax", reading), ""]
    for index, reason in rep.skipped[:3]:
        lines.append(f"- skipped sentence {index + 1}: {reason}")
    return lines


def main() -> int:
    torch.set_num_threads(1)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", nargs="+", default=["en-fr", "de-en"])
    parser.add_argument("--split", default="test", help="assets/data/PAIR.SPLIT.tsv (default: test)")
    parser.add_argument("--limit", type=int, default=0, help="only the first N sentences (0: all)")
    args = parser.parse_args()
    print("# Alignment from cross-attention\n")
    print("Gold: the generated corpora's links (sure `i-j`, possible `i?j`); AER after Och & Ney (2003), "
          "counts summed over the corpus. Readings: plain = the row that predicts the word; shift-aware = the "
          "row where the word is the decoder input (Chen et al. 2020). Layers and heads are 1-based.\n")
    for pair in args.pairs:
        print("\n".join(report(pair, args.split, args.limit)))
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
