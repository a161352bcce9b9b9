"""Batches for the built-in Transformer: the right shift, and teacher forcing in one parallel pass (padding:
model.engine.tensors.pad_batch)."""

from __future__ import annotations

import numpy as np
import torch
from attention_lens.model.builtin.attention import NO_BUGS, Bugs
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.contributions import batch_parts, row_parts
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.runs import RawRun
from attention_lens.model.engine.tensors import pad_batch, to_numpy


def decoder_inputs(labels: list[int], cfg: ModelConfig, shift: bool) -> list[int]:
    """With the shift (the correct setting) row t reads label t-1, row 0 reads BOS; without it, row t
    reads label t itself, the very token it must predict."""
    return [cfg.bos_id, *labels[:-1]] if shift else list(labels)


def padded_pairs(model: Transformer, srcs: list[list[int]], labels: list[list[int]], shift: bool):
    """Sources and decoder inputs padded into batches on the model's device: (src, src_keep, dec_in, tgt_keep)."""
    cfg, device = model.cfg, model.src_embed.weight.device
    src, src_keep = (t.to(device) for t in pad_batch(srcs, cfg.pad_id))
    dec_in, tgt_keep = (t.to(device) for t in pad_batch([decoder_inputs(lab, cfg, shift) for lab in labels],
                                                        cfg.pad_id))
    return src, src_keep, dec_in, tgt_keep


@torch.no_grad()
def teacher_forced_batch(model: Transformer, srcs: list[list[int]], labels: list[list[int]], causal: bool,
                         shift: bool, need_weights: bool = True,
                         keep: dict[str, torch.Tensor | None] | None = None, need_parts: bool = False,
                         bugs: Bugs = NO_BUGS) -> list[RawRun]:
    """One parallel pass per batch. Each returned run is cut to its own sentence's n and m.
    keep: the head masks of model.engine.heads.keep_masks (ablation), or None. need_parts: each run's
    extra["parts"] holds its ContributionParts, from this same pass. bugs: switched on for this pass."""
    keep = keep or dict.fromkeys(("enc", "dec", "cross"))
    src, src_keep, dec_in, tgt_keep = padded_pairs(model, srcs, labels, shift)
    enc = model.encode(src, src_keep, need_weights, keep["enc"], bugs)
    out = model.decode(dec_in, enc, decoder_self_mask(tgt_keep, causal), need_weights=need_weights,
                       keep=(keep["dec"], keep["cross"]), bugs=bugs)
    parts = batch_parts(model, enc, out, keep) if need_parts else None
    runs = []
    for b, (s, lab) in enumerate(zip(srcs, labels)):
        n, m = len(s), len(lab)
        runs.append(RawRun(
            src_ids=list(s), dec_in_ids=dec_in[b, :m].tolist(), out_ids=list(lab),
            logits=to_numpy(out.logits[b, :m]),
            enc_attn=np.stack([to_numpy(w[b, :, :n, :n]) for w in enc.attentions]) if need_weights else np.zeros(0),
            dec_attn=np.stack([to_numpy(w[b, :, :m, :m]) for w in out.self_attentions]) if need_weights
            else np.zeros(0),
            cross_attn=np.stack([to_numpy(w[b, :, :m, :n]) for w in out.cross_attentions]) if need_weights
            else np.zeros(0),
            extra={"parts": row_parts(parts, b, n, m)} if parts is not None else {},
        ))
    return runs


@torch.no_grad()
def cross_attention_batch(model: Transformer, srcs: list[list[int]], labels: list[list[int]], causal: bool,
                          shift: bool, keep: dict[str, torch.Tensor | None] | None = None) -> list[np.ndarray]:
    """The cross-attention of each teacher-forced pair, (L, h, m, n) float32, from one parallel pass that
    computes nothing else it can skip: the self-attentions through the fused kernel (no weights), no output
    projection (no logits), the last layer stopped at its cross weights (Transformer.cross_attentions). The same
    weights as teacher_forced_batch's cross_attn (up to float rounding)."""
    keep = keep or dict.fromkeys(("enc", "dec", "cross"))
    src, src_keep, dec_in, tgt_keep = padded_pairs(model, srcs, labels, shift)
    enc = model.encode(src, src_keep, need_weights=False, keep=keep["enc"])
    weights = model.cross_attentions(dec_in, enc, decoder_self_mask(tgt_keep, causal), (keep["dec"], keep["cross"]))
    cross = to_numpy(torch.stack(weights, dim=1))  # (B, L, h, T, N): one copy for the batch
    return [cross[b, :, :, :len(lab), :len(s)] for b, (s, lab) in enumerate(zip(srcs, labels))]
