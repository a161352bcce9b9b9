"""Decoding with the built-in Transformer: teacher forcing, and incremental greedy / sampling / beam search
with a key-value cache. Every function records the attention rows exactly as they were computed."""

from __future__ import annotations

import numpy as np
import torch

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


def _choose(logits: torch.Tensor, options: DecodeOptions, gen: torch.Generator) -> torch.Tensor:
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
            nxt = _choose(logits, options, gen)
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
    """Beam search of width K over one sentence. Each hypothesis carries its own attention rows.

    A hypothesis ends when it emits EOS among the top K candidates; search stops when K have ended (so
    K = 1 is exactly greedy). Final ranking: log-probability divided by length.
    Returns (final hypotheses best first, the live beams after every step).
    """
    cfg = model.cfg
    k_beams = options.beam_size
    src, src_keep = pad_batch([src_ids], cfg.pad_id)
    n = len(src_ids)
    max_len = min(options.max_len or default_max_len(cfg, n), cfg.max_positions)
    enc = model.encode(src, src_keep)
    enc_attn = np.stack([_np(w[0]) for w in enc.attentions])
    caches = model.init_caches(enc)
    # Each live hypothesis: (tokens read so far, chosen ids, score, per-step records).
    live = [([cfg.bos_id], [], 0.0, [])]
    finished: list[tuple[list[int], list[int], float, list]] = []
    beam_steps: list[list[dict]] = []
    for t in range(max_len):
        last = torch.tensor([[h[0][-1]] for h in live], dtype=torch.long)
        enc_b = type(enc)(enc.memory.expand(len(live), -1, -1), enc.src_keep.expand(len(live), -1), [])
        out = model.decode(last, enc_b, None, caches, start=t)  # the newest query sees every position so far
        logits = out.logits[:, -1]  # (live, V)
        logp = logits.log_softmax(-1)
        total = logp + torch.tensor([h[2] for h in live])[:, None]
        if t < len(options.forced):
            cand = total[:, options.forced[t]]
            order = cand.argsort(descending=True)[: 2 * k_beams]
            picks = [(int(i), options.forced[t], float(cand[i])) for i in order]
        else:
            flat = total.view(-1).topk(min(2 * k_beams, total.numel()))
            vocab = total.shape[1]
            picks = [(int(i) // vocab, int(i) % vocab, float(s)) for s, i in zip(flat.values, flat.indices)]
        new_live, parents = [], []
        for rank, (parent, tok, score) in enumerate(picks):
            inputs, chosen, _, records = live[parent]
            record = (np.stack([_np(w[parent, :, 0]) for w in out.self_attentions]),
                      np.stack([_np(w[parent, :, 0]) for w in out.cross_attentions]), _np(logits[parent]))
            hyp = (inputs + [tok], chosen + [tok], score, records + [record])
            if tok == cfg.eos_id:
                if rank < k_beams:
                    finished.append(hyp)
            elif len(new_live) < k_beams:
                new_live.append(hyp)
                parents.append(parent)
        beam_steps.append([{"tokens": [model_piece for model_piece in h[1]], "score": h[2]} for h in new_live])
        if len(finished) >= k_beams or not new_live:
            break
        index = torch.tensor(parents, dtype=torch.long)
        caches = [c.select(index) for c in out.caches]
        live = new_live
    if len(finished) < k_beams:
        finished.extend(live[: k_beams - len(finished)])
    finished.sort(key=lambda h: -h[2] / max(len(h[1]), 1))
    runs = []
    for inputs, chosen, score, records in finished[:k_beams]:
        m = len(chosen)
        layers = records[0][0].shape[0]
        dec = np.zeros((layers, cfg.n_heads, m, m), dtype=np.float32)
        cross = np.zeros((layers, cfg.n_heads, m, n), dtype=np.float32)
        for t, (s_row, c_row, _) in enumerate(records):
            dec[:, :, t, : t + 1] = s_row
            cross[:, :, t] = c_row
        runs.append(RawRun(list(src_ids), inputs[:m], chosen, np.stack([r[2] for r in records]), enc_attn, dec,
                           cross, score=score))
    return runs, beam_steps
