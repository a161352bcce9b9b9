"""`python -m model probe`: the causality probe (model/analysis/probe.py) on one sentence."""

from __future__ import annotations

import argparse
import json
import sys

from attention_lens.model.cli.common import add_bug_switches, add_model, bug_names, open_model

BUG_WORDS = {"mask_after_softmax": "mask after the softmax", "swap_cross": "cross-attention arguments swapped",
             "unscaled": "no 1/sqrt(d_k) scaling"}


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.probe import probe

    engine = open_model(args)
    result = probe(engine, args.text, args.target, causal=not args.no_causal_mask, shift=not args.no_shift,
                   bugs=bug_names(args))
    if args.json:
        print(json.dumps(result.to_dict(), ensure_ascii=False))
        return 0
    verdict = "LEAKS" if result.leaks else "PASS"
    print(f"{verdict}: max past logit change {result.max_past_logit_change:.3g} "
          f"({'>' if result.leaks else '<='} {result.threshold:g})")
    print(f"largest weight on a later position: {result.future_attention_mass:.3g}")
    if result.leaks:
        j = result.worst_position
        print(f"worst: replacing the labels from position {j} ({result.label_tokens[j]!r}) on moved rows 0..{j} "
              f"by {result.position_changes[j]:.3g}")
    print(f"(teacher forcing on {len(result.label_tokens)} labels from the {result.target_source}, causal mask "
          f"{'on' if result.causal else 'off'}, shift {'on' if result.shift else 'off'}"
          + "".join(f", {BUG_WORDS[name]}" for name in result.bugs) + ")", file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "probe", help="causality probe: do earlier positions' logits move when later targets change",
        description="The causality probe: teacher-force a sentence, change the later target tokens, and measure "
                    "how far the earlier positions' predictions move. A healthy decoder's do not move at all; a "
                    "decoder that can see the future (the causal mask off, or applied after the softmax) LEAKS.",
        epilog="""examples:
  %(prog)s --model checkpoints/en-fr --text "the black cat sat on the mat ."
  %(prog)s --model checkpoints/en-fr --text "the black cat sat on the mat ." --no-causal-mask""")
    add_model(p)
    p.add_argument("--text", required=True, help="source sentence")
    p.add_argument("--target", help="reference target (default: the model's own greedy translation)")
    p.add_argument("--no-causal-mask", action="store_true", help="teacher forcing without the causal mask")
    p.add_argument("--no-shift", action="store_true", help="teacher forcing without the right shift")
    add_bug_switches(p, "The probe runs every pass with them: the mask applied after the softmax leaves 0 weight "
                        "on later positions, and still leaks.")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout and nothing else there")
    p.set_defaults(func=run)
