"""Scaled dot-product attention that returns its weights as a value, and multi-head attention."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from attention_lens.model.engine.heads import head_output_norms
from torch import nn


@dataclass(frozen=True)
class Bugs:
    """The silent bugs a run may switch on (DecodeOptions; model.engine.bugs). Off: the correct computation."""

    mask_after_softmax: bool = False  # masked weights zeroed after the softmax, the rest not renormalised
    unscaled: bool = False  # scores not divided by sqrt(d_k)
    swap_cross: bool = False  # cross-attention as (memory, x, x) (model.builtin.transformer.DecoderLayer)


NO_BUGS = Bugs()


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
              scaled: bool = True, mask_after_softmax: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v.

    q: (B, h, Tq, d_k); k, v: (B, h, Tk, d_k); mask: bool broadcastable to (B, h, Tq, Tk), True = may attend,
    or None when every key may be attended (a cached decoding step of an unpadded batch: skipping the fill
    saves two operations per attention call, most of a step being per-operation overhead at small sizes).
    scaled=False leaves out the 1/sqrt(d_k); mask_after_softmax=True zeroes the masked weights after the
    softmax instead of the scores before it (both bugs on purpose, for the Leakage lab).
    Returns (out (B, h, Tq, d_k), weights (B, h, Tq, Tk)).
    """
    weights = attention_weights(q, k, mask, scaled, mask_after_softmax)
    return weights @ v, weights


def attention_weights(q: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None, scaled: bool = True,
                      mask_after_softmax: bool = False) -> torch.Tensor:
    """The weights (B, h, Tq, Tk) of `attention` alone, computed as it computes them."""
    scores = q @ k.transpose(-2, -1)  # (B, h, Tq, Tk)
    if scaled:
        scores = scores / math.sqrt(q.shape[-1])
    if mask is not None and not mask_after_softmax:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    if mask is not None and mask_after_softmax:
        weights = weights.masked_fill(~mask, 0.0)
    return weights


def attention_no_weights(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         mask: torch.Tensor | None, scaled: bool = True) -> torch.Tensor:
    """The same computation through PyTorch's fused kernel, which does not expose the weights.

    Used where nothing is being traced (training, evaluation, the capture-overhead benchmark).
    """
    if not scaled:
        return F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=1.0)
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class MultiHeadAttention(nn.Module):
    """h parallel heads of d_k = d_model / h; keys and values can be projected once and reused."""

    def __init__(self, d_model: int, n_heads: int, scaled: bool = True) -> None:
        super().__init__()
        self.scaled = scaled  # False only for a model trained without the scaling (ModelConfig.scaled)
        self.h = n_heads
        self.d_k = d_model // n_heads
        self.w_q = nn.Linear(d_model, d_model)
        self.w_k = nn.Linear(d_model, d_model)
        self.w_v = nn.Linear(d_model, d_model)
        self.w_o = nn.Linear(d_model, d_model)

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        """(B, T, d_model) -> (B, h, T, d_k)."""
        b, t, _ = x.shape
        return x.view(b, t, self.h, self.d_k).transpose(1, 2)

    def project_kv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """x: (B, Tk, d_model) -> keys and values, each (B, h, Tk, d_k)."""
        return self._split(self.w_k(x)), self._split(self.w_v(x))

    def forward(self, x: torch.Tensor, k: torch.Tensor, v: torch.Tensor, mask: torch.Tensor | None,
                need_weights: bool = True, keep: torch.Tensor | None = None,
                bugs: Bugs = NO_BUGS) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x: (B, Tq, d_model) queries; k, v: (B, h, Tk, d_k) -> ((B, Tq, d_model), weights or None).

        keep: (h,) 1.0 / 0.0 per head, (B, h) a mask per batch row, or None: a head mask on the head outputs
        before W_O (ablation; the weights are still computed and returned as they were). bugs: the switched-on
        bugs of this run."""
        q = self._split(self.w_q(x))
        scaled = self.scaled and not bugs.unscaled
        if need_weights or bugs.mask_after_softmax:  # the fused kernel cannot mask after its softmax
            out, weights = attention(q, k, v, mask, scaled, bugs.mask_after_softmax)
            weights = weights if need_weights else None
        else:
            out, weights = attention_no_weights(q, k, v, mask, scaled), None
        if keep is not None:
            out = out * (keep[:, None, None] if keep.dim() == 1 else keep[:, :, None, None])
        b, _, t, _ = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, t, self.h * self.d_k)), weights

    def weights_only(self, x: torch.Tensor, k: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """The weights forward(x, k, v, mask) returns (no bugs), without the values, the head outputs or W_O."""
        return attention_weights(self._split(self.w_q(x)), k, mask, self.scaled)

    def value_output_norms(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, Tk, d_model) the keys' inputs -> (B, h, Tk): ||v_j W_O^h||, the norm of what key j sends
        through head h (Kobayashi et al. 2020; W_O's bias belongs to no key and is left out)."""
        v = self._split(self.w_v(x))  # (B, h, Tk, d_k)
        return head_output_norms(v, self.w_o.weight, self.h)

