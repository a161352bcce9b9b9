"""The Heads ranking's time, one full teacher-forced pass per head (the ranking as it was: every head's loss
over the pairs in batches of 64, file order) beside the batched ranking (model.analysis.ablation.rank_heads:
many heads off in one pass, a head mask per row, the unchanged prefix shared), in one run, with the largest
difference of any head's loss increase.

    python -m benchmarks.heads_speed --model checkpoints/everyday-en-fr --pairs 200

The pairs are the first N of the model's own test split (its card's data and seed); the last line printed is
one JSON object."""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from attention_lens.model.analysis.ablation import rank_heads
from attention_lens.model.analysis.scores import source_ids, teacher_forced_totals
from attention_lens.model.engine.heads import every_head
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.runs import DecodeOptions


def rank_heads_one_pass_per_head(engine, sources, targets) -> dict:
    """The previous ranking: the base loss, then for every head its own teacher-forced passes over all pairs."""
    causal, shift = engine.trained_setting
    srcs = [source_ids(engine, s) for s in sources]
    labels = [engine.prepare_target(t)[0] for t in targets]

    def loss(ablate):
        options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift, ablate=ablate)
        return teacher_forced_totals(engine, srcs, labels, options, 64).loss

    base = loss(())
    heads = [{"kind": k, "layer": la, "head": h, "loss_increase": loss((f"{k}:{la}:{h}",)) - base}
             for k, la, h in every_head(engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads)]
    heads.sort(key=lambda h: -h["loss_increase"])
    return {"base_loss": base, "heads": heads}


def main(argv: list[str] | None = None) -> int:
    from attention_lens.model.corpora.grouped_split import held_out_split

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default="checkpoints/everyday-en-fr")
    ap.add_argument("--pairs", type=int, default=200)
    args = ap.parse_args(argv)
    engine = load_engine(args.model, device="cpu")
    pairs = held_out_split(engine.card["data"], int(engine.card.get("seed", 0)))["test"][:args.pairs]
    sources, targets = [s for s, _ in pairs], [t for _, t in pairs]
    t0 = time.perf_counter()
    old = rank_heads_one_pass_per_head(engine, sources, targets)
    t_old = time.perf_counter() - t0
    t0 = time.perf_counter()
    new = rank_heads(engine, sources, targets, progress=False)
    t_new = time.perf_counter() - t0
    name = lambda h: f"{h['kind']}:{h['layer']}:{h['head']}"  # noqa: E731
    got = {name(h): h["loss_increase"] for h in new["heads"]}
    diff = max(abs(got[name(h)] - h["loss_increase"]) for h in old["heads"])
    same_order = [name(h) for h in old["heads"]] == [name(h) for h in new["heads"]]
    print(json.dumps({"model": args.model, "pairs": len(pairs), "heads": len(old["heads"]),
                      "one_pass_per_head_s": round(t_old, 2), "batched_s": round(t_new, 2),
                      "speedup": round(t_old / t_new, 2), "max_loss_increase_diff": float(np.float64(diff)),
                      "base_loss_diff": abs(old["base_loss"] - new["base_loss"]), "same_order": same_order}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
