"""`python -m model merge FILE.json ...`: the `--json` outputs of the shards of one file (`--shard K/N`) added up
into the output of one run over the whole file. Every figure is recomputed from summed counts (tokens, NLL,
exact matches, chrF / BLEU statistics, per-head sums, alignment link counts), never by averaging the shards'
ratios. Each output names its command in `merge.kind`; `MERGERS` maps a kind to its merge function (a command
module adds its own)."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from typing import Any

Merger = Callable[[Sequence[dict[str, Any]]], dict[str, Any]]


def merge_eval(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from attention_lens.model.analysis.scores import EvalSums

    return EvalSums.merged(results).result()


def merge_heads(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from attention_lens.model.analysis.ablation import HeadLosses
    from attention_lens.model.analysis.head_roles import ROLE_RULE, Tally, roles_of

    out = HeadLosses.merged(results).result()
    if all("role_counts" in r for r in results):
        tallies = Tally.merged([r["role_counts"] for r in results])
        out["roles"] = roles_of(tallies)
        out["role_rule"] = ROLE_RULE
        out["role_counts"] = {code: t.counts() for code, t in tallies.items()}
    return out


def merge_align(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from attention_lens.model.cli import align  # the align command's own merge of its counts

    merge_results = getattr(align, "merge_results", None)
    if merge_results is None:
        raise ValueError("merge: this version of align has no merge of its outputs")
    return merge_results(results)


def merge_align_audio(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    from attention_lens.model.analysis.timing.report import merge_reports

    return merge_reports(results)


MERGERS: dict[str, Merger] = {"eval": merge_eval, "heads": merge_heads, "align": merge_align,
                              "align-audio": merge_align_audio}


def merge(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One output from several shards' outputs of the same command, model and file (ValueError otherwise)."""
    if not results:
        raise ValueError("merge: give the JSON outputs of the shards")
    tags = [r.get("merge") if isinstance(r, dict) else None for r in results]
    if any(not isinstance(t, dict) or "kind" not in t for t in tags):
        raise ValueError("merge: every file must be the --json output of eval, heads or align (it names its kind "
                         "under \"merge\")")
    kinds = {t["kind"] for t in tags}
    if len(kinds) != 1:
        raise ValueError(f"merge: the files come from different commands ({', '.join(sorted(kinds))})")
    kind = kinds.pop()
    if kind not in MERGERS:
        raise ValueError(f"merge: no merge for {kind!r} outputs")
    models = {t.get("model") for t in tags}
    if len(models) != 1:
        raise ValueError(f"merge: the files come from different models ({', '.join(sorted(map(str, models)))})")
    shards = [t.get("shard", "1/1") for t in tags]
    counts = {s.partition("/")[2] for s in shards}
    if len(counts) != 1:
        raise ValueError(f"merge: the shards were cut differently ({', '.join(shards)})")
    if len(set(shards)) != len(shards):
        raise ValueError(f"merge: a shard is given twice ({', '.join(sorted(shards))})")
    out = MERGERS[kind](results)
    n = int(counts.pop() or 1)
    out["merge"] = {"kind": kind, "model": tags[0].get("model"), "shard": "1/1" if len(shards) == n else
                    "+".join(sorted(shards)), "shards": sorted(shards)}
    if len(shards) != n:
        out["merge"]["missing"] = [f"{k}/{n}" for k in range(1, n + 1) if f"{k}/{n}" not in shards]
    return out


def run(args: argparse.Namespace) -> int:
    import sys

    if args.links:
        return _run_links(args)
    from attention_lens.model.corpora.example import read_text_lines

    results = []
    for path in args.files:
        try:  # a line that is not UTF-8: ValueError naming the file and line, as every command's input
            results.append(json.loads("\n".join(text for _, text in read_text_lines(path))))
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{path}: not a JSON output ({exc})") from None
    out = merge(results)
    if "missing" in out["merge"]:
        print(f"warning: shards {', '.join(out['merge']['missing'])} are missing: the figures cover the others only",
              file=sys.stderr)
    text = json.dumps(out)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    else:
        print(text)
    return 0


def _run_links(args: argparse.Namespace) -> int:
    """`merge --links`: the shards' `align --out` links files as one run's (line n for line n of the data)."""
    import sys

    from attention_lens.model.analysis.alignment.merge import merge_links

    lines = list(merge_links(args.files))  # every file read and checked before anything is written
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.writelines(line + "\n" for line in lines)
    else:
        sys.stdout.writelines(line + "\n" for line in lines)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("merge", help="add up the --json outputs of the shards of one file (--shard K/N)",
                       description="Add up the --json outputs of eval, heads or align run on the shards of one "
                                   "file (--shard K/N): counts are summed and every figure recomputed from the sums, "
                                   "so the result equals one run over the whole file. With --links, the links files "
                                   "of align --shard K/N --out are merged line by line into one run's.",
                       epilog="""example:
  for k in 1 2 3 4; do python -m model eval --model M --data test.tsv --shard $k/4 --json > eval.$k.json; done
  python -m model merge eval.*.json
  python -m model merge --links links.*.txt --out links.txt   # align --shard K/N --out links.K.txt""")
    p.add_argument("files", nargs="+", metavar="FILE.json", help="the shards' --json outputs (with --links: their "
                                                                 "align --out links files)")
    p.add_argument("--links", action="store_true",
                   help="the files are the links files of `align --shard K/N --out` (each has a line for every "
                        "line of the data, links on its shard's lines): write one run's links file, line n for "
                        "line n of the data")
    p.add_argument("--out", help="write the merged JSON here (default: standard output)")
    p.set_defaults(func=run)
