"""Many heads switched off in one batched pass: the teacher-forced loss of a batch of sentences with no head off
and with each of a list of heads alone off, for the built-in Transformer.

A batch row is a copy of a sentence with one head zeroed (a head mask per row, model.builtin.attention). What a
head's ablation cannot change is computed once and shared by its rows: switching off a head of encoder layer l
leaves encoder layers 1 .. l-1 as they were, so its rows start from the plain run's input to layer l; a decoder
self- or cross-attention head of decoder layer l leaves the encoder, the cross-attention keys and values of every
layer and decoder layers 1 .. l-1 as they were, so its rows start from the plain run's input to decoder layer l.
Every row then runs the rest of the network as the one-head-off pass would (same weights, same masks), so the
figures equal those of one full pass per head to float rounding.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from attention_lens.model.builtin.batch import decoder_inputs
from attention_lens.model.builtin.transformer import Encoded, LayerCache, Transformer
from attention_lens.model.engine.masks import decoder_self_mask, padding_mask
from attention_lens.model.engine.tensors import pad_batch

IGNORE = -100


def _nll(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Summed negative log-likelihood per row (float64): logits (R, T, V), labels (R, T) with IGNORE at padding.
    The log-softmax runs in float64, as model.analysis.scores does for one run."""
    r, t, v = logits.shape
    nll = F.cross_entropy(logits.reshape(r * t, v), labels.reshape(r * t), ignore_index=IGNORE,
                          reduction="none")
    return nll.view(r, t).double().sum(1)


def _rows(x: torch.Tensor, copies: int) -> torch.Tensor:
    """A batch tensor repeated `copies` times along the batch: row c * B + b is sentence b's copy c."""
    return x if copies == 1 else x.repeat(copies, *([1] * (x.dim() - 1)))


def _keep(rows: int, copies: int, heads: list[int | None], n_heads: int, device: torch.device,
          dtype: torch.dtype) -> torch.Tensor:
    """(copies * B, h): 0.0 at head heads[c] (0-based; None: none) in copy c's rows, 1.0 elsewhere."""
    keep = torch.ones(copies, rows // copies, n_heads, device=device, dtype=dtype)
    for c, h in enumerate(heads):
        if h is not None:
            keep[c, :, h] = 0.0
    return keep.view(rows, n_heads)


@torch.no_grad()
def head_off_nll(model: Transformer, srcs: list[list[int]], labels: list[list[int]], causal: bool, shift: bool,
                 heads: list[tuple[str, int, int]], max_rows: int = 256) -> np.ndarray:
    """(1 + len(heads),) summed negative log-likelihood (nats) of the labels over the batch: first with no head
    off, then with each head (kind code enc|dec|cross, layer, head; 1-based) alone off. At most max_rows rows
    (copies of the batch's sentences) per pass."""
    cfg = model.cfg
    device, dtype = model.src_embed.weight.device, model.src_embed.weight.dtype
    b = len(srcs)
    src, src_keep = pad_batch(srcs, cfg.pad_id)
    dec_in, tgt_keep = pad_batch([decoder_inputs(lab, cfg, shift) for lab in labels], cfg.pad_id)
    lab = torch.full(dec_in.shape, IGNORE, dtype=torch.long)
    for i, seq in enumerate(labels):
        lab[i, :len(seq)] = torch.tensor(seq, dtype=torch.long)
    src, src_keep, dec_in, tgt_keep, lab = (t.to(device) for t in (src, src_keep, dec_in, tgt_keep, lab))
    self_mask = decoder_self_mask(tgt_keep, causal)
    enc = model.encode(src, src_keep, need_weights=False)
    caches = model.init_caches(enc)
    out = model.decode(dec_in, enc, self_mask, caches=caches, need_weights=False)
    result = np.zeros(1 + len(heads))
    result[0] = float(_nll(out.logits, lab).sum())
    per = max(1, max_rows // max(b, 1))  # heads per pass
    groups: dict[tuple[str, int], list[int]] = {}
    for k, (kind, layer, _) in enumerate(heads):
        groups.setdefault(("enc" if kind == "enc" else "dec", layer), []).append(k)
    for (stack, layer), members in groups.items():
        for start in range(0, len(members), per):
            chunk = members[start:start + per]
            copies = len(chunk)
            rows = copies * b
            kinds = [heads[k][0] for k in chunk]
            idx = [heads[k][2] - 1 for k in chunk]
            mask_lab = _rows(lab, copies)
            if stack == "enc":
                x = _rows(enc.inputs[layer - 1], copies)
                keep_rows = _rows(src_keep, copies)
                mask = padding_mask(keep_rows)
                keep = _keep(rows, copies, idx, cfg.n_heads, device, dtype)
                for j in range(layer - 1, len(model.encoder)):
                    x, _ = model.encoder[j](x, mask, False, keep if j == layer - 1 else None)
                enc_rows = Encoded(x, keep_rows, [], None)
                logits = model.decode(_rows(dec_in, copies), enc_rows, _rows(self_mask, copies),
                                      need_weights=False).logits
            else:
                y = _rows(out.inputs[layer - 1], copies)
                memory = _rows(enc.memory, copies)
                cross_mask = None if bool(src_keep.all()) else padding_mask(_rows(src_keep, copies))
                rows_mask = _rows(self_mask, copies)
                keep_self = _keep(rows, copies, [h if k == "dec" else None for k, h in zip(kinds, idx)],
                                  cfg.n_heads, device, dtype)
                keep_cross = _keep(rows, copies, [h if k == "cross" else None for k, h in zip(kinds, idx)],
                                   cfg.n_heads, device, dtype)
                for j in range(layer - 1, len(model.decoder)):
                    cache = LayerCache(None, None, _rows(caches[j].cross_k, copies), _rows(caches[j].cross_v, copies))
                    first = j == layer - 1
                    y, _, _, _ = model.decoder[j](y, cache, rows_mask, cross_mask, False,
                                                  (keep_self, keep_cross) if first else (None, None),
                                                  memory=memory)
                logits = model.generator(y)
            nll = _nll(logits, mask_lab).view(copies, b).sum(1)
            for c, k in enumerate(chunk):
                result[1 + k] = float(nll[c])
    return result
