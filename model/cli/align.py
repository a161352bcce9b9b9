"""`python -m model align`: word alignments from cross-attention, scored per head and per sentence against gold
links, read from the file as a stream (--shard K/N; shards add up with `merge`); `python -m model score-links`:
any aligner's Pharaoh links file scored against the same gold with the same code, beside a model's heads."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from attention_lens.model.analysis.alignment import DEFAULT_METHOD, OMISSION_MASS
from attention_lens.model.analysis.alignment.corpus_stream import FileCorpus
from attention_lens.model.analysis.alignment.sentences import LinkSpill, write_summary
from attention_lens.model.cli.align_audio import add_options as add_audio_options
from attention_lens.model.cli.align_audio import run as run_audio
from attention_lens.model.cli.common import add_model, open_model, read_pairs
from attention_lens.model.engine.device import cpu_threads, resolve_device, torch_threads
from attention_lens.model.engine.stream import Shard, add_stream_options, count_lines

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example

BATCH = 32  # sentences per batched pass (a batch's logits and attention stay well under 100 MB)


def _fmt(x: float | None) -> str:
    return "   -  " if x is None else f"{x:6.3f}"


def print_report(summary: dict, layers: int, heads: int, worst: list | None = None) -> None:
    """The text report; `worst`: the worst sentences (SentenceScore), else read from summary["sentences"]."""
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
        for c in sel.get("candidates", []):
            print(f"  candidate {c['weights']:9s} " + (f"{c['method']:34s} AER {c['aer']:.4f} (where chosen)"
                                                      if c["method"] else f"not counted: {c['note']}"))
    print(f"AER {summary['aer']:.4f}   precision {summary['precision']:.4f}   recall {summary['recall']:.4f}")
    print("\nreading  method                         AER  precision  recall")
    for reading, r in summary["readings"].items():
        print(f"{reading:8s} {r['method']:28s} {_fmt(r['aer'])}   {_fmt(r['precision'])}  {_fmt(r['recall'])}")
    extract, reading = summary["method"].split("-")[:2]
    if summary["heads"]:  # none for a reading of the whole model (the gradient reading)
        print(f"\nAER of every head ({extract}, {reading} reading; layers and heads 1-based):")
        grid = {(h["layer"], h["head"]): h["aer"] for h in summary["heads"]}
        print("       " + "".join(f"   H{hi:<3d}" for hi in range(1, heads + 1)))
        for li in range(1, layers + 1):
            print(f"L{li:<5d}" + "".join(f" {_fmt(grid.get((li, hi)))}" for hi in range(1, heads + 1)))
    print_breakdown(summary)
    if worst is None:
        worst = sorted((r for r in summary["sentences"] if not r.get("selection")), key=lambda r: -r["aer"])[:5]
    else:
        worst = [r.as_dict() for r in worst]
    if worst:
        print("\nworst sentences (0-based line, AER, precision, recall): "
              + "; ".join(f"{r['index']} {r['aer']:.2f} {r['precision']:.2f} {r['recall']:.2f}" for r in worst))


def print_breakdown(summary: dict) -> None:
    bd = summary.get("breakdown")
    if not bd:
        return
    names = {"frequency": f"source-word frequency (in the {bd['frequency_counts']} counts)",
             "token_class": "token class", "length": "sentence length (source words)",
             "distance": "reordering distance (words off the diagonal)"}
    for group, title in names.items():
        print(f"\nby {title}:   precision  recall   AER   (sure links)")
        for row in bd[group]:
            print(f"  {row['band']:14s} {_fmt(row['precision'])}  {_fmt(row['recall'])} {_fmt(row['aer'])}"
                  f"   ({row['sure']})")
    om = summary.get("omissions")
    if om and om["source_words"]:
        shown = ", ".join(f"{w['word']} ({w['count']})" for w in om["words"][:10])
        print(f"\nomissions: {om['omitted']} of {om['source_words']} source words have no link and less than "
              f"{om['threshold']:g} of a target word's attention in all: {shown or '-'}")


def _corpus(args: argparse.Namespace) -> FileCorpus:
    return FileCorpus(args.data, Shard.parse(args.shard), args.batch_size or BATCH, args.window, not args.quiet,
                      args.limit)


def engine_device(args: argparse.Namespace) -> str:
    """"cpu" when the model will run on the CPU (--device cpu, or auto without a GPU)."""
    return resolve_device(args.device).type


def run(args: argparse.Namespace) -> int:
    """`align`, on as many CPU threads as --threads asks (default: the idle cores) while it runs, torch's own
    count restored after it. With 2 or more on the CPU, that many batches' passes run at once, each at one
    intra-op thread, ahead of the reading and counting (model.engine.ahead)."""
    if args.audio_data:  # a speech model's word timings (model.cli.align_audio)
        return run_audio(args)
    if not args.data:
        raise ValueError("align needs --data FILE (sentence pairs) or, for a speech model, --audio-data LIST")
    shard = Shard.parse(args.shard)
    corpus = _corpus(args)
    select_on = None
    if args.select_on:
        if not args.method.startswith("best"):
            raise ValueError("--select-on only makes sense with --method best")
        select_on = read_pairs(args.select_on)
    if shard.count > 1 and args.method.startswith("best") and select_on is None:
        raise ValueError("--shard with --method best needs --select-on FILE (every shard must choose the same "
                         "method), or give a fixed --method")
    threads = cpu_threads(args.threads) if engine_device(args) == "cpu" else None
    workers = threads if threads is not None and threads > 1 else 0
    with torch_threads(1 if workers else threads):
        return _align(args, shard, corpus, select_on, workers)


def _align(args: argparse.Namespace, shard: Shard, corpus: FileCorpus, select_on: list[Example] | None,
           workers: int = 0) -> int:
    from attention_lens.model.analysis.alignment import format_pharaoh, run_alignment

    engine = open_model(args)
    lines = LinkSpill() if args.out else None
    report = run_alignment(engine, method=args.method, select_on=select_on, corpus=corpus, keep_links=False,
                           on_links=(lambda k, found: lines.add(k, format_pharaoh(found))) if lines is not None
                           else None, batch_size=args.batch_size or BATCH, progress=not args.quiet,
                           omission_mass=args.omission_mass, workers=workers)
    summary = report.summary(sentences=False)
    summary["merge"].update(model=args.model, shard=str(shard))  # what `merge` checks across the files
    if shard.count > 1:
        summary["shard"] = str(shard)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            # line n of the output is line n of --data (empty where blank, skipped or, with --shard, another
            # shard's: a shard's file runs to the data's last line, so `merge --links` lays the shards together)
            last = max([lines.last, *(i for i, _ in report.skipped)], default=-1)
            if shard.count > 1:
                last = max(last, (count_lines(args.data) or 0) - 1)
            done = -1
            for k, text in lines.in_order():
                f.write("\n" * (k - done - 1) + text + "\n")
                done = k
            f.write("\n" * (last - done))
            lines.close()
        print(f"wrote {args.out}: {len(lines)} sentences of {report.method.name} links"
              + (f" ({len(report.skipped)} skipped sentences left as empty lines)" if report.skipped else ""),
              file=sys.stderr)
    if summary["aer"] is None and report.with_gold:
        print(f"note: the file has {report.with_gold} sentences with gold links but none could be scored (every "
              f"one was skipped), so no metrics were computed", file=sys.stderr)
    elif summary["aer"] is None:
        print("note: the file has no gold links, so no metrics were computed"
              + ("" if args.out else " (use --out FILE to keep the extracted links)"), file=sys.stderr)
    for index, reason in sorted(report.skipped)[:5]:
        print(f"skipped line {index + 1}: {reason}", file=sys.stderr)
    if len(report.skipped) > 5:
        print(f"... and {len(report.skipped) - 5} more skipped", file=sys.stderr)
    if args.json:
        write_summary(summary, report.sentences, sys.stdout)
    else:
        print_report(summary, engine.n_decoder_layers, engine.n_heads, report.sentences.worst(5))
    return 0


def merge_results(results: list[dict]) -> dict:
    """The align --json outputs of the shards of one file as one run's (`python -m model merge`)."""
    from attention_lens.model.analysis.alignment.merge import merge_summaries

    return merge_summaries(results)


def run_score_links(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.alignment.links_file import score_links

    engine = open_model(args) if args.model else None
    summary = score_links(args.data, args.links, engine=engine, method=args.method,
                          select_on=read_pairs(args.select_on) if args.select_on else None, progress=not args.quiet)
    if args.json:
        print(json.dumps(summary, ensure_ascii=False))
        return 0
    print(f"links      {args.links}")
    print(f"sentences  {summary['n']} read, {summary['n_scored']} scored against gold")
    if summary["aer"] is None:
        print("no gold links in --data: nothing to score")
        return 0
    print(f"AER {summary['aer']:.4f}   precision {summary['precision']:.4f}   recall {summary['recall']:.4f}")
    if "model" in summary:
        m = summary["model"]
        print(f"model      {m['method']}: AER {m['aer']:.4f}   precision {m['precision']:.4f}   recall "
              f"{m['recall']:.4f} (same sentences)")
        v = summary["versus"]
        print(f"versus     {v['agree']} links in both; {v['links_only']} only in the file ({v['links_only_right']} "
              f"of them right), {v['model_only']} only from the model ({v['model_only_right']} right)")
    print_breakdown(summary)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("align", help="word alignments from cross-attention; AER / precision / recall per head",
                       description="Teacher-force each reference, merge the cross-attention of subword pieces into "
                                   "words, extract links and (when the file has gold links) score them, per head "
                                   "and per sentence, with a breakdown of the errors. Methods: "
                                   "EXTRACT-READING-SELECTOR, e.g. argmax-shift-L2H1, threshold0.3-plain-layer2, "
                                   "argmax-mean, or 'best' (see model/analysis/alignment). The file is read as a "
                                   "stream: memory does not grow with its length.")
    add_model(p)
    p.add_argument("--data", help="source<TAB>target[<TAB>gold Pharaoh links] (or --audio-data for a speech model)")
    p.add_argument("--method", default=DEFAULT_METHOD,
                   help="EXTRACT[-READING][-SELECTOR][-WEIGHTS] (WEIGHTS: norm, rollout, or saliency, the "
                        "gradient reading, whose only selector is mean: union-plain-mean-saliency), or 'best' "
                        "(every method on every weights; best-raw, best-norm, best-rollout, best-saliency: on "
                        "one) (default: %(default)s)")
    p.add_argument("--select-on", help="with --method best: choose the method on this gold TSV (e.g. a valid "
                                      "split) and report it on --data; without it, best is chosen on the first "
                                      "half of --data and reported on the second")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout (with `sentences`, "
                                                       "`breakdown`, `omissions`, `sinks` and the `merge` counts)")
    p.add_argument("--out", help="write the chosen method's links, Pharaoh format: line n for line n of --data "
                                 "(with --shard: the other shards' lines empty; `merge --links` joins the shards' "
                                 "files into one run's)")
    p.add_argument("--limit", type=int, default=0, help="only the first N sentences")
    p.add_argument("--omission-mass", type=float, default=OMISSION_MASS,
                   help="a source word with no link is an omission when all target words together give it less "
                        "than this much attention (in units of one target word's; default %(default)s)")
    add_stream_options(p, batch_default=BATCH)
    p.add_argument("--threads", type=int, help="CPU threads (default: the cores idle when it starts, at least 1; "
                                               "on a busy shared machine more threads only spin). With 2 or more, "
                                               "that many batches go through the model at once, each on one "
                                               "thread, while the results of the ones before are counted")
    p.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    add_audio_options(p)
    p.set_defaults(func=run)

    q = sub.add_parser("score-links", help="score any aligner's Pharaoh links file against gold, beside a model",
                       description="Read a links file (one line per line of --data, `i-j` source-target, 0-based, "
                                   "as eflomal, fast_align, awesome-align and GIZA++ write them) and score it "
                                   "against the gold column of --data with the same code as align: AER, precision, "
                                   "recall, per sentence and broken down. With --model, the model's method (default "
                                   "best) is scored on the same sentences and each sentence says where they "
                                   "disagree.")
    q.add_argument("--data", required=True, help="source<TAB>target<TAB>gold")
    q.add_argument("--links", required=True, help="Pharaoh links, one line per line of --data")
    add_model(q)  # every model option align has, with --model optional here
    for action in q._actions:
        if action.dest == "model":
            action.required = False
            action.help = "also align with this model and compare (checkpoint folder or Hugging Face folder)"
    q.add_argument("--method", default="best", help="the model's method (default: %(default)s)")
    q.add_argument("--select-on", help="with --method best: choose the model's method on this gold TSV")
    q.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    q.add_argument("--quiet", action="store_true", help="no progress bar on stderr")
    q.set_defaults(func=run_score_links)
