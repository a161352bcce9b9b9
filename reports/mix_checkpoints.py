"""Weight interpolation of two checkpoints of one model (WiSE-FT, Wortsman et al. 2022): every weight is
ALPHA * A + (1 - ALPHA) * B. A fine-tune (A) mixed with the model it started from (B) trades what the fine-tune
learnt against what it lost; choose ALPHA on held-out data (valid chrF, agreement with the aligner's links on valid
pairs), never on the data the result is reported on.

    .venv/bin/python -m reports.mix_checkpoints --a RUN --b checkpoints/everyday-en-fr --alpha 0.7 --out MIX

The two must have the same config and the same tokenizers. MIX gets A's tokenizers, word counts and card, with
`weights_mix` ({a, b, alpha}) added and A's measured test/valid metrics removed (measure MIX's own with `eval`).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from attention_lens.model.builtin.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from attention_lens.model.builtin.transformer import Transformer
from safetensors.torch import load_file


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--a", required=True, help="checkpoint folder weighted by ALPHA (e.g. the fine-tune)")
    p.add_argument("--b", required=True, help="checkpoint folder weighted by 1 - ALPHA (e.g. its start)")
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    if not 0.0 <= args.alpha <= 1.0:
        print(f"error: --alpha must be in [0, 1], got {args.alpha}", file=sys.stderr)
        return 2
    try:
        a, b = load_checkpoint(Path(args.a)), load_checkpoint(Path(args.b))
    except CheckpointError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    same_tok = (Path(args.a, "source.model").read_bytes() == Path(args.b, "source.model").read_bytes()
                and Path(args.a, "target.model").read_bytes() == Path(args.b, "target.model").read_bytes())
    if a.config != b.config or not same_tok:
        print("error: the two checkpoints differ in config or tokenizers; only one model's weights can be mixed",
              file=sys.stderr)
        return 2
    sa, sb = a.model.state_dict(), b.model.state_dict()
    model = Transformer(a.config)
    model.load_state_dict({k: args.alpha * sa[k].float() + (1.0 - args.alpha) * sb[k].float() for k in sa})
    card = {k: v for k, v in a.card.items() if k not in ("test_metrics", "valid_metrics")}
    card["weights_mix"] = {"a": args.a, "b": args.b, "alpha": args.alpha}
    dtype = next(iter(load_file(str(Path(args.a, "model.safetensors"))).values())).dtype  # stored as A's are
    counts = None if a.source_counts is None else Counter(a.source_counts)
    save_checkpoint(Path(args.out), model, a.source_tokenizer, a.target_tokenizer, card, dtype=dtype,
                    source_counts=counts)
    print(f"{args.out}: {args.alpha} x {args.a} + {1 - args.alpha:.3g} x {args.b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
