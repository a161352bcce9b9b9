"""The Heads ranking of a Hugging Face model: one teacher-forced pass per head (Engine.head_off_nll's default, the
ranking as it was for these models) beside many heads per pass (model.hf.ablation.head_off_nll: a copy of the
batch per head, a head mask per batch row, the encoder run once for the decoder's heads), in one run, on the same
pairs with the same batches (model.analysis.ablation.rank_heads), with the largest difference of any head's loss
increase and whether the order is the same.

    python -m benchmarks.hf_heads_speed --model opus-mt-sized --pairs 32
    python -m benchmarks.hf_heads_speed --quick      # opus-mt's layers and heads, 2k vocabulary, 8 pairs

--model is a folder, or a name of harness/models/hf_big's cache (built on first use: opus-mt-sized is a random
Marian of opus-mt's dimensions, 6 + 6 layers x 8 heads, d_model 512, a 58k vocabulary). The pairs are random
words (hf_big.synthetic_text), the same for both. The last line printed is one JSON object."""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import torch
from attention_lens.model.analysis.ablation import rank_heads
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.hf.engine import HFEngine

from harness.models import hf_big


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="opus-mt-sized")
    ap.add_argument("--pairs", type=int, default=32)
    ap.add_argument("--batch", type=int, default=32, help="pairs per call (rank_heads' batch_size)")
    ap.add_argument("--words", type=int, default=12, help="words per synthetic sentence")
    ap.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    ap.add_argument("--quick", action="store_true", help="opus-mt's shape with a 2k vocabulary, 8 pairs")
    args = ap.parse_args(argv)
    if args.threads:
        torch.set_num_threads(args.threads)
    if args.quick:
        folder = hf_big.build_marian_sized(Path(tempfile.mkdtemp()) / "opus-quick", vocab=2000, sentences=4000)
        args.pairs = min(args.pairs, 8)
    else:
        folder = Path(args.model) if Path(args.model).is_dir() else hf_big.cached(args.model)
    engine = load_engine(folder, device="cpu")
    text = hf_big.synthetic_text(2 * args.pairs, args.words, seed=1)
    sources, targets = text[:args.pairs], text[args.pairs:]
    kw = dict(progress=False, batch_size=args.batch)

    batched_method = HFEngine.head_off_nll
    HFEngine.head_off_nll = Engine.head_off_nll  # the one-pass-per-head default, for the "old" run
    try:
        t0 = time.perf_counter()
        old = rank_heads(engine, sources, targets, **kw)
        t_old = time.perf_counter() - t0
    finally:
        HFEngine.head_off_nll = batched_method
    t0 = time.perf_counter()
    new = rank_heads(engine, sources, targets, **kw)
    t_new = time.perf_counter() - t0

    def name(h):
        return f"{h['kind']}:{h['layer']}:{h['head']}"

    got = {name(h): h["loss_increase"] for h in new["heads"]}
    diff = max(abs(got[name(h)] - h["loss_increase"]) for h in old["heads"])
    out = {"model": str(folder.name), "layers": [engine.n_encoder_layers, engine.n_decoder_layers],
           "heads": engine.n_heads, "vocab": engine.card.get("vocab_size"), "pairs": args.pairs,
           "batch": args.batch, "tokens": new["tokens"], "threads": torch.get_num_threads(),
           "one_pass_per_head_s": round(t_old, 1), "batched_s": round(t_new, 1),
           "speedup": round(t_old / t_new, 2), "max_diff_loss_increase": diff,
           "same_order": [name(h) for h in old["heads"]] == [name(h) for h in new["heads"]]}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
