"""Decoding with the built-in Transformer: teacher forcing, and incremental greedy / sampling / beam search
with a key-value cache. Every function records the attention rows exactly as they were computed."""

from __future__ import annotations

import numpy as np
import torch

from model.beam import beam_search as shared_beam_search
from model.config import ModelConfig
from model.engine import DecodeOptions, RawRun
from model.masks import decoder_self_mask
from model.transformer import Transformer


def pad_batch(seqs: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Ragged id lists -> (ids (B, T), keep (B, T) bool)."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    return ids, ids != pad_id


def decoder_inputs(labels: list[int], cfg: ModelConfig, shift: bool) -> list[int]:
    """With the shift (the correct setting) row t reads label t-1, row 0 reads BOS; without it, row t
    reads label t itself, the very token it must predict."""
    return [cfg.bos_id, *labels[:-1]] if shift else list(labels)


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().float().numpy()


@torch.no_grad()
def teacher_forced_batch(model: Transformer, srcs: list[list[int]], labels: list[list[int]], causal: bool,
                         shift: bool, need_weights: bool = True) -> list[RawRun]:
    """One parallel pass per batch. Each returned run is cut to its own sentence's n and m."""
    cfg = model.cfg
    src, src_keep = pad_batch(srcs, cfg.pad_id)
    dec_in, tgt_keep = pad_batch([decoder_inputs(lab, cfg, shift) for lab in labels], cfg.pad_id)
    # Pads inside the decoder input are only at the end; keep = position < length.
    lengths = torch.tensor([len(lab) for lab in labels])
    tgt_keep = torch.arange(dec_in.shape[1])[None, :] < lengths[:, None]
    enc = model.encode(src, src_keep, need_weights)
    out = model.decode(dec_in, enc, decoder_self_mask(tgt_keep, causal), need_weights=need_weights)
    runs = []
    for b, (s, lab) in enumerate(zip(srcs, labels)):
        n, m = len(s), len(lab)
        runs.append(RawRun(
            src_ids=list(s), dec_in_ids=dec_in[b, :m].tolist(), out_ids=list(lab), logits=_np(out.logits[b, :m]),
            enc_attn=np.stack([_np(w[b, :, :n, :n]) for w in enc.attentions]) if need_weights else np.zeros(0),
            dec_attn=np.stack([_np(w[b, :, :m, :m]) for w in out.self_attentions]) if need_weights else np.zeros(0),
            cross_attn=np.stack([_np(w[b, :, :m, :n]) for w in out.cross_attentions]) if need_weights else np.zeros(0),
        ))
    return runs


def choose_next(logits: torch.Tensor, options: DecodeOptions, gen: torch.Generator) -> torch.Tensor:
    """logits (B, V) -> next ids (B,): argmax, or a sample at the given temperature among the top k."""
    if options.mode != "sample":
        return logits.argmax(-1)
    scaled = logits / options.temperature
    if options.top_k:
        kth = scaled.topk(min(options.top_k, scaled.shape[-1]), dim=-1).values[:, -1:]
        scaled = scaled.masked_fill(scaled < kth, float("-inf"))
    return torch.multinomial(scaled.softmax(-1), 1, generator=gen).squeeze(-1)


def default_max_len(cfg: ModelConfig, n: int) -> int:
    return min(2 * n + 10, cfg.max_positions)


@torch.inference_mode()  # lighter than no_grad per operation (no version counters): ~10% of a cached step
def generate_batch(model: Transformer, srcs: list[list[int]], options: DecodeOptions,
                   need_weights: bool = True) -> list[RawRun]:
    """Incremental decoding, one position per step, with the KV cache. Row t of every attention is recorded
    at step t, as computed; the decoder self-attention row t has t+1 keys (the rest are masked: zero)."""
    cfg = model.cfg
    src, src_keep = pad_batch(srcs, cfg.pad_id)
    batch = len(srcs)
    max_len = options.max_len or default_max_len(cfg, src.shape[1])
    max_len = min(max_len, cfg.max_positions)
    gen = torch.Generator().manual_seed(options.seed)
    enc = model.encode(src, src_keep, need_weights)
    caches = model.init_caches(enc)
    last = torch.full((batch, 1), cfg.bos_id, dtype=torch.long)
    dec_in, out_ids, logits_rows, self_rows, cross_rows = [], [], [], [], []
    done = torch.zeros(batch, dtype=torch.bool)
    for t in range(max_len):
        # The newest query sees every position so far: no mask.
        out = model.decode(last, enc, None, caches, start=t, need_weights=need_weights)
        caches = out.caches
        logits = out.logits[:, -1]  # (B, V)
        if t < len(options.forced):
            nxt = torch.full((batch,), options.forced[t], dtype=torch.long)
        else:
            nxt = choose_next(logits, options, gen)
        nxt = nxt.masked_fill(done, cfg.pad_id)
        dec_in.append(last[:, 0])
        out_ids.append(nxt)
        logits_rows.append(logits)
        if need_weights:  # one stack per step, not one copy per layer: the recording stays off the profile
            self_rows.append(torch.stack([w[:, :, 0] for w in out.self_attentions]))  # (L, B, h, t+1)
            cross_rows.append(torch.stack([w[:, :, 0] for w in out.cross_attentions]))  # (L, B, h, n)
        done |= nxt == cfg.eos_id
        last = nxt[:, None]
        if bool(done.all()):
            break
    outs = torch.stack(out_ids, 1)  # (B, steps)
    ins = torch.stack(dec_in, 1)
    all_logits = torch.stack(logits_rows, 1)
    if need_weights:
        steps = len(self_rows)
        all_cross = torch.stack(cross_rows, 3)  # (L, B, h, steps, n)
        all_dec = all_cross.new_zeros(*all_cross.shape[:3], steps, steps)  # (L, B, h, steps, steps)
        for t, rows in enumerate(self_rows):
            all_dec[..., t, : t + 1] = rows
    runs = []
    for b in range(batch):
        n = len(srcs[b])
        row = outs[b].tolist()
        m = row.index(cfg.eos_id) + 1 if cfg.eos_id in row else len(row)
        if need_weights:
            dec = _np(all_dec[:, b, :, :m, :m].contiguous())
            cross = _np(all_cross[:, b, :, :m, :n].contiguous())
            enc_attn = np.stack([_np(w[b, :, :n, :n]) for w in enc.attentions])
        else:
            dec = cross = enc_attn = np.zeros(0)
        runs.append(RawRun(list(srcs[b]), ins[b, :m].tolist(), row[:m], _np(all_logits[b, :m]), enc_attn, dec, cross))
    return runs


@torch.inference_mode()
def beam_search(model: Transformer, src_ids: list[int],
                options: DecodeOptions) -> tuple[list[RawRun], list[list[dict]]]:
    """Beam search of width K over one sentence (model.beam), with this model's KV cache."""
    cfg = model.cfg
    src, src_keep = pad_batch([src_ids], cfg.pad_id)
    enc = model.encode(src, src_keep)
    state = {"caches": model.init_caches(enc)}

    def step(last: torch.Tensor, t: int):
        width = last.shape[0]
        enc_b = type(enc)(enc.memory.expand(width, -1, -1), enc.src_keep.expand(width, -1), [])
        out = model.decode(last, enc_b, None, state["caches"], start=t)  # the newest query sees all so far
        state["caches"] = out.caches
        return out.logits[:, -1], out.self_attentions, out.cross_attentions

    def reorder(index: torch.Tensor) -> None:
        state["caches"] = [c.select(index) for c in state["caches"]]

    return shared_beam_search(
        step, reorder, src_ids=list(src_ids), enc_attn=np.stack([_np(w[0]) for w in enc.attentions]),
        n_heads=cfg.n_heads, start_id=cfg.bos_id, eos_ids={cfg.eos_id}, k_beams=options.beam_size,
        max_len=min(options.max_len or default_max_len(cfg, len(src_ids)), cfg.max_positions),
        forced=options.forced)
