"""`python -m model aligner` (train a statistical word aligner on a parallel file, write Pharaoh links) and
`python -m model symmetrise` (two directional links files into one)."""

from __future__ import annotations

import argparse
import json
import sys
import time


def _score(golds, links) -> dict | None:
    """AER / precision / recall of the links against the file's gold links (None where a line has none; summed
    counts), or None when no line has any."""
    from attention_lens.model.analysis.alignment import Counts, count

    scored = [(got, gold) for gold, got in zip(golds, links) if gold is not None]
    if not scored:
        return None
    total = sum((count(got, gold) for got, gold in scored), Counts())
    return {"n_scored": len(scored), **{k: round(v, 4) for k, v in total.as_dict().items()}}


def run_aligner(args: argparse.Namespace) -> int:
    from attention_lens.model.aligner import CHOICES, combine, default_backend, describe_backend, directions
    from attention_lens.model.analysis.alignment import format_pharaoh
    from attention_lens.model.analysis.alignment.corpus_stream import gold_lines
    from attention_lens.model.cli.common import read_pairs

    read = list(gold_lines(args.data))  # gold links checked against their sentence, as align checks them
    if not read:
        raise ValueError(f"{args.data}: no sentence pairs")
    rows, golds = [line for line, _ in read], [gold for _, gold in read]
    chosen = list(range(len(rows)))
    if args.split:
        from attention_lens.model.corpora.grouped_split import split_by_sentence

        part = set(split_by_sentence([(r.source, r.target) for r in rows], args.seed)[args.split])
        chosen = [k for k, r in enumerate(rows) if (r.source, r.target) in part]
    also = [(r.source, r.target) for path in args.also for r in read_pairs(path)]
    backend = args.backend or default_backend()
    print(f"aligner: {describe_backend(backend, args.backend is None)}", file=sys.stderr)
    t0 = time.perf_counter()
    forward, reverse = directions([(rows[k].source, rows[k].target) for k in chosen], backend, args.iterations,
                                  also=also)
    seconds = time.perf_counter() - t0
    got = combine(forward, reverse, args.symmetrise)
    links = [set() for _ in rows]
    for k, found in zip(chosen, got):
        links[k] = found
    with open(args.out, "w", encoding="utf-8") as fh:  # line n of the output is line n of --data
        done = 0
        for row, found in zip(rows, links):
            fh.write("\n" * (row.number - done - 1) + format_pharaoh(found) + "\n")
            done = row.number
    summary = {"out": args.out, "backend": backend, "reproducible": backend == "ibm2",
               "symmetrise": args.symmetrise, "pairs": len(rows),
               "aligned": len(chosen), "extra_pairs": len(also), "seconds": round(seconds, 1)}
    scores = _score([golds[k] for k in chosen], [links[k] for k in chosen])
    if scores:
        summary["gold"] = scores
        summary["gold_every_symmetrisation"] = {
            h: _score([golds[k] for k in chosen], combine(forward, reverse, h)) for h in CHOICES}
    print(f"wrote {args.out}: {backend} links ({args.symmetrise}) for {len(chosen)} of {len(rows)} pairs"
          + (f", trained with {len(also)} more" if also else "") + f" in {seconds:.1f} s", file=sys.stderr)
    print(json.dumps(summary) if args.json else
          (f"AER {scores['aer']:.4f}   precision {scores['precision']:.4f}   recall {scores['recall']:.4f} "
           f"({scores['n_scored']} sentences with gold)" if scores else "no gold column: nothing scored"))
    return 0


def _read_links_file(path: str) -> list[set[tuple[int, int]]]:
    from attention_lens.model.analysis.alignment.links_file import parse_links, read_links

    return [parse_links(text, f"{path}, line {number}") for number, text in read_links(path)]


def run_symmetrise(args: argparse.Namespace) -> int:
    from attention_lens.model.aligner import symmetrise
    from attention_lens.model.analysis.alignment import format_pharaoh

    forward, reverse = _read_links_file(args.forward), _read_links_file(args.reverse)
    if len(forward) != len(reverse):
        raise ValueError(f"{args.forward} has {len(forward)} lines but {args.reverse} has {len(reverse)}")
    if args.reverse_target_first:
        reverse = [{(i, j) for j, i in links} for links in reverse]
    with open(args.out, "w", encoding="utf-8") as fh:
        for a, b in zip(forward, reverse):
            fh.write(format_pharaoh(symmetrise(a, b, args.heuristic)) + "\n")
    print(f"wrote {args.out}: {len(forward)} sentences, {args.heuristic}", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    from attention_lens.model.aligner.symmetrise import HEURISTICS

    p = sub.add_parser("aligner", help="train a statistical word aligner on a parallel file and write its links",
                       description="Trains a word aligner on the pairs of --data (plus --also files) in both "
                                   "directions, symmetrises them and writes Pharaoh links (source-target, 0-based "
                                   "whitespace words), one line per pair of --data. Scores them when the file has "
                                   "a gold column (with --json: every symmetrisation of the same training). "
                                   "Backends: eflomal (pip install 'attention-lens[eflomal]'; the default "
                                   "when installed; sampled, and it takes no seed, so reruns can differ slightly) "
                                   "and ibm2 (fast_align's IBM Model 2 in numpy, deterministic). Every run says "
                                   "on stderr which backend ran.",
                       epilog="""examples:
  %(prog)s --data assets/data/en-fr.test.tsv --out en-fr.links
  %(prog)s --data my_pairs.tsv --out my.links --backend ibm2 --symmetrise intersection""")
    p.add_argument("--data", required=True, help="source<TAB>target[<TAB>gold] per line (.gz read as gzip)")
    p.add_argument("--out", required=True, help="the links file")
    p.add_argument("--backend", choices=("eflomal", "ibm2"), help="default: eflomal when installed, else ibm2")
    p.add_argument("--symmetrise", default="grow-diag-final-and", choices=("forward", "reverse", *HEURISTICS),
                   help="how the two directions combine (default %(default)s); forward / reverse: one direction")
    p.add_argument("--iterations", type=int, default=0,
                   help="EM iterations per direction (ibm2, default 5); eflomal: 0 keeps its own schedule")
    p.add_argument("--also", action="append", default=[], metavar="FILE",
                   help="more parallel text to train on (its links are not written); repeatable")
    p.add_argument("--split", choices=("train", "valid", "test"),
                   help="align only this split of --data, as `train --data FILE --seed S` splits it; the other "
                        "lines stay empty and are not trained on")
    p.add_argument("--seed", type=int, default=0, help="the split's seed (train's --seed)")
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.set_defaults(func=run_aligner)

    s = sub.add_parser("symmetrise", help="symmetrise two directional Pharaoh links files",
                       description="Combine a source-to-target and a target-to-source links file (Pharaoh format, "
                                   "one line per sentence pair) into one, by intersection, union, grow, grow-diag, "
                                   "grow-diag-final or grow-diag-final-and (Koehn's definition: "
                                   "model/aligner/symmetrise.py).",
                       epilog="""example:
  %(prog)s --forward fwd.links --reverse rev.links --heuristic grow-diag-final-and --out sym.links""")
    s.add_argument("--forward", required=True, help="source-to-target links, source index first")
    s.add_argument("--reverse", required=True, help="target-to-source links, source index first unless "
                                                    "--reverse-target-first")
    s.add_argument("--reverse-target-first", action="store_true", help="the reverse file writes target-source")
    s.add_argument("--heuristic", choices=HEURISTICS, default="grow-diag-final-and")
    s.add_argument("--out", required=True)
    s.set_defaults(func=run_symmetrise)
