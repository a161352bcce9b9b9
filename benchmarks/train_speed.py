"""Training speed of candidate everyday-model sizes on real Tatoeba batches: seconds per step and pairs per second.

    .venv/bin/python benchmarks/train_speed.py [--threads 2] [--steps 25] [--quick]

Each configuration: a fresh model, a SentencePiece vocabulary of 8,000 pieces per side learnt on 40,000 pairs,
random batches of those pairs, the median step time after 5 warm-up steps (forward, backward, AdamW step).
All configurations run in one process, one after another, so their ratios are comparable within a run.
"""

from __future__ import annotations

import argparse
import gzip
import random
import statistics
import time
from pathlib import Path

import torch
from attention_lens.model.builtin.batch import decoder_inputs
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.tensors import pad_batch
from torch import nn

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = [(256, 1024, 3, 64), (256, 1024, 3, 128), (256, 768, 3, 128), (192, 768, 3, 128), (256, 1024, 4, 128)]


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--steps", type=int, default=25)
    p.add_argument("--quick", action="store_true", help="one small configuration, 3 steps (checks the script)")
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    with gzip.open(ROOT / "assets" / "data" / "tatoeba" / "en-fr.tsv.gz", "rt", encoding="utf-8") as f:
        rows = [tuple(line.rstrip("\n").split("\t")) for line in f]
    random.seed(0)
    random.shuffle(rows)
    rows = rows[: 2000 if args.quick else 40000]
    vocab = 500 if args.quick else 8000
    src_tok = train_tokenizer([s for s, _ in rows], vocab, raw_text=True)
    tgt_tok = train_tokenizer([t for _, t in rows], vocab, raw_text=True)
    src = [[*src_tok.encode(s).ids, 3] for s, _ in rows]
    lab = [[*tgt_tok.encode(t).ids, 3] for _, t in rows]
    configs, steps = ([(64, 128, 1, 16)], 3) if args.quick else (CONFIGS, args.steps)
    print("d_model d_ff layers batch params  s/step  pairs/s")
    for d, ff, layers, batch in configs:
        cfg = ModelConfig(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=d, n_heads=4,
                          n_encoder_layers=layers, n_decoder_layers=layers, d_ff=ff)
        model = Transformer(cfg)
        opt = torch.optim.AdamW(model.parameters(), 1e-4)
        loss_fn = nn.CrossEntropyLoss(ignore_index=cfg.pad_id)
        times = []
        for i in range(steps + (0 if args.quick else 5)):
            idx = random.sample(range(len(src)), batch)
            s, keep = pad_batch([src[j] for j in idx], cfg.pad_id)
            labels = [lab[j] for j in idx]
            dec, _ = pad_batch([decoder_inputs(x, cfg, True) for x in labels], cfg.pad_id)
            lab_t, _ = pad_batch(labels, cfg.pad_id)
            lengths = torch.tensor([len(x) for x in labels])
            tgt_keep = torch.arange(dec.shape[1])[None, :] < lengths[:, None]
            t0 = time.perf_counter()
            enc = model.encode(s, keep, need_weights=False)
            logits = model.decode(dec, enc, decoder_self_mask(tgt_keep, True), need_weights=False).logits
            loss = loss_fn(logits.reshape(-1, logits.shape[-1]), lab_t.reshape(-1))
            opt.zero_grad()
            loss.backward()
            opt.step()
            if args.quick or i >= 5:
                times.append(time.perf_counter() - t0)
        med = statistics.median(times)
        n = sum(p.numel() for p in model.parameters())
        print(f"{d:7d} {ff:4d} {layers:6d} {batch:5d} {n / 1e6:5.1f}M {med:7.3f} {batch / med:8.0f}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
