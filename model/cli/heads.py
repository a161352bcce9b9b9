"""`python -m model heads`: every head ranked by the teacher-forced loss increase when it alone is off."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def run(args: argparse.Namespace) -> int:
    from model.analysis.ablation import rank_heads
    from model.corpora import read_tsv
    from model.engine.loader import load_engine

    rows = read_tsv(Path(args.data))
    if not rows:
        raise ValueError(f"{args.data}: no sentence pairs")
    rows = rows[: args.limit] if args.limit else rows
    engine = load_engine(args.model, allow_hub=args.allow_hub)
    result = rank_heads(engine, [r.source for r in rows], [r.target for r in rows], progress=True)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"base loss {result['base_loss']:.4f} nats/token over {len(rows)} pairs (teacher forcing)")
    print("rank  head        loss increase")
    for i, h in enumerate(result["heads"], 1):
        print(f"{i:4d}  {h['kind']}:{h['layer']}:{h['head']:<6}  {h['loss_increase']:+.4f}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("heads", help="rank every head by the loss increase when it alone is switched off")
    p.add_argument("--model", required=True, help="checkpoint folder (ours) or Hugging Face model folder / hub id")
    p.add_argument("--allow-hub", action="store_true", help="allow downloading a hub id (needs the network)")
    p.add_argument("--data", required=True, help="TSV of source<TAB>target")
    p.add_argument("--limit", type=int, help="only the first N pairs")
    p.add_argument("--json", action="store_true", help="JSON: base_loss, heads [{kind, layer, head, loss_increase}]")
    p.set_defaults(func=run)
