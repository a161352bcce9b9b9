"""`python -m model corpus`: write a built-in corpus's splits as TSV (source, target, gold)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.corpora import generate, write_tsv

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for split, rows in generate(args.pair, seed=args.seed).items():
        write_tsv(rows, out / f"{args.pair}.{split}.tsv")
        print(f"{out / f'{args.pair}.{split}.tsv'}: {len(rows)} pairs", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "corpus", help="write a built-in corpus (train/valid/test TSV with gold alignments)",
        description="Write one of the built-in generated corpora (English-French or German-English) as train, "
                    "valid and test TSV files: source, target, and the gold word links of every pair (Pharaoh "
                    "format). Its grammar and gold-link rules: docs/corpus.md.",
        epilog="""example:
  %(prog)s --pair de-en --out data/""")
    p.add_argument("--pair", choices=("en-fr", "de-en"), required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run)
