"""The one incremental decoding loop (greedy, sampling, forced prefix), for every engine.

The engine supplies a `Stepper` (one position per call, with its own key-value cache) and its decoding
constants (start, end and padding ids, the forced prefix, the ids it never chooses): `model.engine.runs.Decoder`
declares what the loop needs of an engine, and it touches nothing else (beam search, model.engine.beam, the
same). Row t of every attention is recorded at step t, as computed; the decoder self-attention row t has t+1
keys (the rest are masked: zero).
"""

from __future__ import annotations

import numpy as np
import torch
from attention_lens.model.engine.runs import DecodeOptions, Decoder, RawRun
from attention_lens.model.engine.tensors import to_numpy


def choose_next(logits: torch.Tensor, options: DecodeOptions, gen: torch.Generator | None) -> torch.Tensor:
    """logits (B, V) -> next ids (B,): argmax, or a sample at the given temperature among the top k (gen: the
    seeded generator on the logits' device; None: made here from options.seed)."""
    if options.mode != "sample":
        return logits.argmax(-1)
    if gen is None:
        gen = torch.Generator(device=logits.device).manual_seed(options.seed)
    scaled = logits / options.temperature
    if options.top_k:
        kth = scaled.topk(min(options.top_k, scaled.shape[-1]), dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.multinomial(scaled.softmax(-1), 1, generator=gen).squeeze(-1)


@torch.inference_mode()  # lighter than no_grad per operation (no version counters): ~10% of a cached step
def decode_batch(engine: Decoder, srcs: list[list[int]], options: DecodeOptions,
                 need_weights: bool = True) -> list[RawRun]:
    """Incremental decoding of a batch of sources, one position per step; each run cut at its end token."""
    batch = len(srcs)
    width = max(len(s) for s in srcs)
    stepper = engine.start_decoding(srcs, options, need_weights)
    forced = engine.forced_prefix(options)
    filler = engine.pad_id if engine.pad_id is not None else engine.end_id
    eos = torch.tensor(sorted(engine.eos_ids))
    gen = None
    last = torch.full((batch, 1), engine.start_id, dtype=torch.long)
    dec_in, out_ids, logits_rows, self_rows, cross_rows = [], [], [], [], []
    done = torch.zeros(batch, dtype=torch.bool)
    for t in range(engine.decode_length(options, width)):
        logits, self_attns, cross_attns = stepper.step(last, t)
        if t == 0:  # the loop's own tensors live where the model runs (the stepper moves `last` there)
            last, done, eos = last.to(logits.device), done.to(logits.device), eos.to(logits.device)
            gen = torch.Generator(device=logits.device).manual_seed(options.seed)
        if t < len(forced):
            nxt = torch.full((batch,), forced[t], dtype=torch.long, device=logits.device)
        else:
            nxt = choose_next(engine.restrict(logits, t - len(forced)), options, gen)
        nxt = nxt.masked_fill(done, filler)
        dec_in.append(last[:, 0])
        out_ids.append(nxt)
        logits_rows.append(logits)
        if need_weights:  # one stack per step, not one copy per layer: the recording stays off the profile
            self_rows.append(torch.stack([w[:, :, 0] for w in self_attns]))  # (L, B, h, t+1)
            cross_rows.append(torch.stack([w[:, :, 0] for w in cross_attns]))  # (L, B, h, n)
        done |= torch.isin(nxt, eos)
        last = nxt[:, None]
        if bool(done.all()):
            break
    outs, ins, all_logits = torch.stack(out_ids, 1), torch.stack(dec_in, 1), torch.stack(logits_rows, 1)
    if need_weights:
        steps = len(self_rows)
        all_cross = torch.stack(cross_rows, 3)  # (L, B, h, steps, n)
        all_dec = all_cross.new_zeros(*all_cross.shape[:3], steps, steps)  # (L, B, h, steps, steps)
        for t, rows in enumerate(self_rows):
            all_dec[..., t, : t + 1] = rows
    runs = []
    for b, src in enumerate(srcs):
        n, row = len(src), outs[b].tolist()
        m = next((i + 1 for i, x in enumerate(row) if x in engine.eos_ids), len(row))
        enc_attn = dec = cross = np.zeros(0)
        if need_weights:
            dec = to_numpy(all_dec[:, b, :, :m, :m].contiguous())
            cross = to_numpy(all_cross[:, b, :, :m, :n].contiguous())
            enc_attn = np.stack([to_numpy(w[b, :, :n, :n]) for w in stepper.enc_attentions])
        runs.append(RawRun(list(src), ins[b, :m].tolist(), row[:m], to_numpy(all_logits[b, :m]), enc_attn, dec,
                           cross))
        if options.contributions and (parts := stepper.contribution_parts(b, runs[-1])) is not None:
            runs[-1].extra["parts"] = parts
    return runs
