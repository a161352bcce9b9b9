"""Adding shards up: the `align --json` objects of N shards of one file (the same model, method and options)
merged into one run's (`merge_summaries`, the `merge` command), and their `--out` links files into one run's
(`merge_links`, `merge --links`)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from itertools import zip_longest
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import merge_summaries as merge_analysis
from attention_lens.model.analysis.alignment.methods import Method
from attention_lens.model.analysis.alignment.report import Report, SentenceScore
from attention_lens.model.analysis.alignment.scoring import Tally


def _tally_of(entry: dict[str, Any]) -> Tally:
    tally = Tally(int(entry["layers"]), int(entry["heads"]), tuple(float(t) for t in entry["thresholds"]),
                  str(entry["weights"]))
    counts = np.asarray(entry["counts"], dtype=np.int64)
    if counts.shape != tally.counts.shape:
        raise ValueError("the counts do not match the method list of their layout")
    tally.counts, tally.n = counts, int(entry["n"])
    return tally


def merge_summaries(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The `align --json` objects of N shards (the same model, method and options) as one run's: every count
    summed (the tally of every method, the per-sentence counts, the breakdown), the ratios computed from the
    sums. ValueError, one line, for outputs that cannot be added up."""
    if not parts:
        raise ValueError("nothing to merge")
    merges = [p.get("merge") for p in parts]
    if not all(isinstance(m, dict) and m.get("kind") == "align" for m in merges):
        raise ValueError("every file must be the --json output of align (with its 'merge' counts)")
    methods = {p["method"] for p in parts}
    if len(methods) != 1:
        raise ValueError(f"the shards used different methods ({', '.join(sorted(methods))}); merge needs one")
    selections = [m.get("selection") for m in merges]
    if any(s and "per_reading" in s and "separate" not in str(s.get("note", "")) for s in selections):
        raise ValueError("a --method best run without --select-on chose its method on its own sentences, so "
                         "shards cannot be added up: use a fixed method or --method best --select-on FILE")
    if any(s != selections[0] for s in selections):
        raise ValueError("the shards' best methods were chosen differently; use the same --select-on file")
    tallies = [_tally_of(m["tally"]) for m in merges if "tally" in m]
    tally = None
    for t in tallies:
        tally = t if tally is None else tally.merged(t)
    method = Method.parse(parts[0]["method"])
    selection: dict[str, Any] = {}
    if selections[0]:
        selection = dict(selections[0])
        if tally is not None and "chosen_on" in selection:
            selection["reported_on"] = tally.n
            selection["in_sample_aer"] = tally[method].aer
    sentences = [SentenceScore.from_dict(r) for p in parts for r in p["sentences"]]
    skipped = [(int(s["index"]), str(s["reason"])) for p in parts for s in p["skipped"]]
    analysis = merge_analysis(parts) if all("breakdown" in p for p in parts) else {}
    n = sum(int(m["n"]) for m in merges)
    with_gold = [m.get("with_gold") for m in merges]
    report = Report(tally if tally is not None and tally.n else None, {}, method, skipped, n,
                    tally.n if tally else 0, selection, None, sentences, analysis,
                    None if None in with_gold else sum(with_gold))
    return report.summary()


def merge_links(paths: Sequence[str]) -> Iterator[str]:
    """The lines of one run's links file from the `align --shard K/N --out` files of one file's shards: each
    shard's file has a line for every line of the data (links on its own lines, the others empty), so line n
    of the result is the one shard's line n that holds links (empty where none does). ValueError, one line,
    for files of different lengths or a line with links in two files (not shards of one run)."""
    from attention_lens.model.corpora.example import read_text_lines

    if not paths:
        raise ValueError("nothing to merge")
    missing = object()
    for number, texts in enumerate(zip_longest(*(read_text_lines(p) for p in paths), fillvalue=missing), start=1):
        if any(t is missing for t in texts):
            short = [p for p, t in zip(paths, texts) if t is missing]
            raise ValueError(f"{', '.join(short)} ended before line {number} of the others: shards of one file's "
                             f"`align --shard K/N --out` all have a line for every line of the data")
        holding = [(p, text) for p, (_, text) in zip(paths, texts) if text.strip()]
        if len(holding) > 1:
            raise ValueError(f"line {number} has links in {holding[0][0]} and {holding[1][0]}: not shards of one run "
                             f"(or a shard given twice)")
        yield holding[0][1] if holding else ""
