"""`python -m model heads`: every head ranked by the teacher-forced loss increase when it alone is off, and
what every head does over the same pairs (its role: model.analysis.head_roles)."""

from __future__ import annotations

import argparse
import json

from attention_lens.model.cli.common import add_model, open_model, read_pairs


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.ablation import rank_heads
    from attention_lens.model.analysis.head_roles import head_roles

    rows = read_pairs(args.data, args.limit or 0)
    engine = open_model(args)
    result = rank_heads(engine, [r.source for r in rows], [r.target for r in rows], progress=True)
    roles = head_roles(engine, rows)
    result["roles"] = roles["heads"]
    result["role_rule"] = roles["rule"]
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"base loss {result['base_loss']:.4f} nats/token over {len(rows)} pairs (teacher forcing)")
    print("rank  head        loss increase")
    for i, h in enumerate(result["heads"], 1):
        print(f"{i:4d}  {h['kind']}:{h['layer']}:{h['head']:<6}  {h['loss_increase']:+.4f}")
    print(f"\nroles over {roles['n']} pairs ({roles['rule']})")
    for h in roles["heads"]:
        print(f"  {h['kind']}:{h['layer']}:{h['head']:<6}  {h['role']:<15} same {h['same']:.2f}  prev "
              f"{h['previous']:.2f}  next {h['next']:.2f}  first {h['first']:.2f}  </s> {h['eos']:.2f}  punct "
              f"{h['punctuation']:.2f}  entropy {h['entropy_norm']:.2f}"
              + (f"  aligned {max(h['aligned'], h['aligned_shift']):.2f}" if h["aligned"] is not None else ""))
    return 0


def register(sub: argparse._SubParsersAction) -> None:
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
                        "entropy_norm}], role_rule")
    p.set_defaults(func=run)
