"""`python -m model heads`: every head ranked by the teacher-forced loss increase when it alone is off, and
what every head does over the same pairs (its role: model.analysis.head_roles)."""

from __future__ import annotations

import argparse
import json

from attention_lens.model.cli.common import add_model, open_model

RANK_BATCH = 16  # sentences per batch: each becomes (heads of a layer) rows of the batched ablation pass


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.ablation import FileRanking
    from attention_lens.model.engine.stream import CorpusStream, Shard

    shard = Shard.parse(args.shard)
    if args.limit is not None and args.limit < 1:
        raise ValueError("--limit must be at least 1")
    engine = open_model(args)
    # The window: with --limit, only the first `limit` lines are read (and bucketed).
    window = min(args.window, args.limit) if args.limit else args.window
    stream = CorpusStream(args.data, shard=shard, batch_size=args.batch_size or RANK_BATCH, window=window,
                          desc="heads", progress=True)
    ranking = FileRanking(engine)
    for batch in stream:
        if args.limit and stream.lines > args.limit:
            batch = batch[:len(batch) - (stream.lines - args.limit)]
        ranking.add(batch)
        if args.limit and stream.lines >= args.limit:
            break
    if not ranking.sentences:
        raise ValueError(f"{args.data}: no sentence pairs" + (f" in shard {shard}" if shard.count > 1 else ""))
    result = ranking.ranking()
    role_result = ranking.role_result()
    result["roles"] = role_result["heads"]
    result["role_rule"] = role_result["rule"]
    result["role_counts"] = role_result["counts"]
    result["merge"] = {"kind": "heads", "shard": str(shard), "model": args.model}
    if args.json:
        print(json.dumps(result))
        return 0
    print_result(result)
    return 0


def print_result(result: dict) -> None:
    print(f"base loss {result['base_loss']:.4f} nats/token over {result['n']} pairs (teacher forcing)")
    print("rank  head        loss increase")
    for i, h in enumerate(result["heads"], 1):
        print(f"{i:4d}  {h['kind']}:{h['layer']}:{h['head']:<6}  {h['loss_increase']:+.4f}")
    print(f"\nroles over {result['n']} pairs ({result['role_rule']})")
    for h in result["roles"]:
        print(f"  {h['kind']}:{h['layer']}:{h['head']:<6}  {h['role']:<15} same {h['same']:.2f}  prev "
              f"{h['previous']:.2f}  next {h['next']:.2f}  first {h['first']:.2f}  </s> {h['eos']:.2f}  punct "
              f"{h['punctuation']:.2f}  entropy {h['entropy_norm']:.2f}"
              + (f"  aligned {max(h['aligned'], h['aligned_shift']):.2f}" if h["aligned"] is not None else ""))


def register(sub: argparse._SubParsersAction) -> None:
    from attention_lens.model.engine.stream import add_stream_options

    p = sub.add_parser(
        "heads", help="rank every head by the loss increase when it alone is switched off",
        description="Which heads matter: switch each attention head off alone and rank the heads by how much the "
                    "teacher-forced loss on a file of pairs rises; and what each head looks at (its own position, "
                    "the previous or next token, the first token or </s>, punctuation, the gold-aligned word), with "
                    "the role that follows.",
        epilog="""examples:
  %(prog)s --model checkpoints/en-fr --data assets/data/en-fr.test.tsv --limit 200
  %(prog)s --model checkpoints/en-fr --data assets/data/en-fr.test.tsv --json""")
    add_model(p)
    p.add_argument("--data", required=True, help="TSV of source<TAB>target")
    p.add_argument("--limit", type=int, help="only the first N pairs")
    p.add_argument("--json", action="store_true",
                   help="JSON: base_loss, heads [{kind, layer, head, loss_increase}], roles [{kind, layer, head, "
                        "role, same, previous, next, first, eos, punctuation, aligned, aligned_shift, entropy, "
                        "entropy_norm}], role_rule; and the counts `merge` adds: n, tokens, base_nll, each head's "
                        "nll, role_counts")
    add_stream_options(p, RANK_BATCH)
    p.set_defaults(func=run)
