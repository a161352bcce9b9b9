"""Scaled dot-product attention that returns its weights as a value, and multi-head attention."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from model.engine.heads import head_output_norms


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
              mask: torch.Tensor | None) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T / sqrt(d_k)) v.

    q: (B, h, Tq, d_k); k, v: (B, h, Tk, d_k); mask: bool broadcastable to (B, h, Tq, Tk), True = may attend,
    or None when every key may be attended (a cached decoding step of an unpadded batch: skipping the fill
    saves two operations per attention call, most of a step being per-operation overhead at small sizes).
    Returns (out (B, h, Tq, d_k), weights (B, h, Tq, Tk)).
    """
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])  # (B, h, Tq, Tk)
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    weights = scores.softmax(dim=-1)
    return weights @ v, weights


def attention_no_weights(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                         mask: torch.Tensor | None) -> torch.Tensor:
    """The same computation through PyTorch's fused kernel, which does not expose the weights.

    Used where nothing is being traced (training, evaluation, the capture-overhead benchmark).
    """
    return F.scaled_dot_product_attention(q, k, v, attn_mask=mask)


class MultiHeadAttention(nn.Module):
    """h parallel heads of d_k = d_model / h; keys and values can be projected once and reused."""

    def __init__(self, d_model: int, n_heads: int) -> None:
        super().__init__()
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
                need_weights: bool = True,
                keep: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """x: (B, Tq, d_model) queries; k, v: (B, h, Tk, d_k) -> ((B, Tq, d_model), weights or None).

        keep: (h,) 1.0 / 0.0 per head, or None: a head mask on the head outputs before W_O (ablation; the
        weights are still computed and returned as they were)."""
        q = self._split(self.w_q(x))
        if need_weights:
            out, weights = attention(q, k, v, mask)
        else:
            out, weights = attention_no_weights(q, k, v, mask), None
        if keep is not None:
            out = out * keep[:, None, None]
        b, _, t, _ = out.shape
        return self.w_o(out.transpose(1, 2).reshape(b, t, self.h * self.d_k)), weights

    def value_output_norms(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, Tk, d_model) the keys' inputs -> (B, h, Tk): ||v_j W_O^h||, the norm of what key j sends
        through head h (Kobayashi et al. 2020; W_O's bias belongs to no key and is left out)."""
        v = self._split(self.w_v(x))  # (B, h, Tk, d_k)
        return head_output_norms(v, self.w_o.weight, self.h)

