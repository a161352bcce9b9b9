"""Longer guided-alignment pairs: groups of 2-4 pairs of a parallel file, with their Pharaoh links, joined into one
pair each (model.training.guided.join_linked_pairs: the links moved by the words before them, so every link still
joins the same two words). Sentences of parliamentary length with exact links, for `train --align-extra`, without
another aligner run.

    .venv/bin/python -m reports.long_pairs --data en-fr.train.hform.tsv --links en-fr.train.hform.links \
        --out en-fr.train.long --seed 0 [--sizes 2 3 4] [--max-pairs N]

writes en-fr.train.long.tsv and en-fr.train.long.links (one line per joined pair). The pairs are shuffled
(--seed) and cut into consecutive groups whose sizes are drawn from --sizes, so every pair with links is used
once; pairs without links are left out.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

from attention_lens.model.corpora import read_tsv
from attention_lens.model.training.guided import join_linked_pairs


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="parallel TSV (source<TAB>target)")
    p.add_argument("--links", required=True, help="Pharaoh links, one line per pair of --data")
    p.add_argument("--out", required=True, help="prefix: writes PREFIX.tsv and PREFIX.links")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--sizes", type=int, nargs="+", default=[2, 3, 4], help="pairs per joined pair, drawn uniformly")
    p.add_argument("--max-pairs", type=int, default=0, help="at most this many joined pairs (0: all)")
    args = p.parse_args(argv)
    rows = read_tsv(Path(args.data))
    lines = Path(args.links).read_text(encoding="utf-8").splitlines()
    if len(lines) != len(rows):
        print(f"error: {args.links} has {len(lines)} lines but {args.data} has {len(rows)} pairs", file=sys.stderr)
        return 2
    linked = [(r.source, r.target, line) for r, line in zip(rows, lines) if line.strip()]
    rng = random.Random(args.seed)
    rng.shuffle(linked)
    out_rows, out_links = [], []
    i = 0
    while i < len(linked) and (not args.max_pairs or len(out_rows) < args.max_pairs):
        k = rng.choice(args.sizes)
        group = linked[i:i + k]
        i += k
        if len(group) < min(args.sizes):
            break
        try:
            source, target, links = join_linked_pairs(group)
        except ValueError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        out_rows.append(f"{source}\t{target}")
        out_links.append(links)
    Path(args.out + ".tsv").write_text("\n".join(out_rows) + "\n", encoding="utf-8")
    Path(args.out + ".links").write_text("\n".join(out_links) + "\n", encoding="utf-8")
    words = sorted(len(r.split("\t")[0].split()) for r in out_rows)
    print(f"{len(out_rows)} joined pairs from {i if i <= len(linked) else len(linked)} of {len(linked)} linked pairs; "
          f"source words median {words[len(words) // 2]}, max {words[-1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
