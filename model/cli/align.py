"""`python -m model align`: word alignments from cross-attention, scored per head against gold links."""

from __future__ import annotations

import argparse
import json
import sys

from attention_lens.model.analysis.alignment import DEFAULT_METHOD
from attention_lens.model.cli.common import add_model, open_model, read_pairs


def _fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def print_report(summary: dict, layers: int, heads: int) -> None:
    print(f"method     {summary['method']}")
    print(f"sentences  {summary['n']} read, {summary['n_scored']} scored against gold, "
          f"{len(summary['skipped'])} skipped")
    if summary["aer"] is None:
        print(summary.get("note", "no metrics"))
        return
    sel = summary.get("selection")
    if sel:
        print(f"selection  {sel['note']} (chosen on {sel.get('chosen_on', 0)}, reported on "
              f"{sel.get('reported_on', 0)})")
    print(f"AER {summary['aer']:.4f}   precision {summary['precision']:.4f}   recall {summary['recall']:.4f}")
    print("\nreading  method                         AER  precision  recall")
    for reading, r in summary["readings"].items():
        print(f"{reading:8s} {r['method']:28s} {_fmt(r['aer'])}   {_fmt(r['precision'])}  {_fmt(r['recall'])}")
    extract, reading = summary["method"].split("-")[:2]
    print(f"\nAER of every head ({extract}, {reading} reading; layers and heads 1-based):")
    grid = {(h["layer"], h["head"]): h["aer"] for h in summary["heads"]}
    print("       " + "".join(f"   H{hi:<3d}" for hi in range(1, heads + 1)))
    for li in range(1, layers + 1):
        print(f"L{li:<5d}" + "".join(f" {_fmt(grid.get((li, hi)))}" for hi in range(1, heads + 1)))


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.alignment import format_pharaoh, run_alignment

    rows = read_pairs(args.data, args.limit)
    engine = open_model(args)
    select_on = None
    if args.select_on:
        if args.method != "best":
            raise ValueError("--select-on only makes sense with --method best")
        select_on = read_pairs(args.select_on)
    report = run_alignment(engine, rows, args.method, batch_size=args.batch_size, progress=not args.quiet,
                           select_on=select_on)
    summary = report.summary()
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            for k in range(len(rows)):
                f.write(format_pharaoh(report.links.get(k, [])) + "\n")
        print(f"wrote {args.out}: {len(report.links)} sentences of {report.method.name} links"
              + (f" ({len(report.skipped)} skipped sentences left as empty lines)" if report.skipped else ""),
              file=sys.stderr)
    if summary["aer"] is None:
        print("note: the file has no gold links, so no metrics were computed"
              + ("" if args.out else " (use --out FILE to keep the extracted links)"), file=sys.stderr)
    for index, reason in report.skipped[:5]:
        print(f"skipped sentence {index + 1}: {reason}", file=sys.stderr)
    if len(report.skipped) > 5:
        print(f"... and {len(report.skipped) - 5} more skipped", file=sys.stderr)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
    else:
        print_report(summary, engine.n_decoder_layers, engine.n_heads)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("align", help="word alignments from cross-attention; AER / precision / recall per head",
                       description="Teacher-force each reference, merge the cross-attention of subword pieces into "
                                   "words, extract links and (when the file has gold links) score them. Methods: "
                                   "EXTRACT-READING-SELECTOR, e.g. argmax-shift-L2H1, threshold0.3-plain-layer2, "
                                   "argmax-mean, or 'best' (see model/analysis/alignment).")
    add_model(p)
    p.add_argument("--data", required=True, help="source<TAB>target[<TAB>gold Pharaoh links]")
    p.add_argument("--method", default=DEFAULT_METHOD,
                   help="EXTRACT[-READING][-SELECTOR] or 'best' (default: %(default)s)")
    p.add_argument("--select-on", help="with --method best: choose the method on this gold TSV (e.g. a valid "
                                      "split) and report it on --data; without it, best is chosen on the first "
                                      "half of --data and reported on the second")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--out", help="write the chosen method's links, Pharaoh format, one line per sentence")
    p.add_argument("--limit", type=int, default=0, help="only the first N sentences")
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    p.set_defaults(func=run)
