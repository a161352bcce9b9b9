"""Attention masks. One convention throughout: boolean, True = this query may attend to this key.

Masks are applied to the scores before the softmax (scores of forbidden keys set to -inf), so a masked
weight is exactly 0 and every row still sums to 1 (Vaswani et al. 2017, section 3.2.3).
"""

from __future__ import annotations

import torch


def causal_mask(m: int, device: torch.device | None = None) -> torch.Tensor:
    """(1, 1, m, m): query i may attend key j iff j <= i."""
    return torch.ones(m, m, dtype=torch.bool, device=device).tril().view(1, 1, m, m)


def full_mask(m: int, device: torch.device | None = None) -> torch.Tensor:
    """(1, 1, m, m): every query may attend every key (the causal mask switched off)."""
    return torch.ones(1, 1, m, m, dtype=torch.bool, device=device)


def padding_mask(keep: torch.Tensor) -> torch.Tensor:
    """keep: (B, T) True for real tokens -> (B, 1, 1, T): no query may attend a padding key."""
    return keep[:, None, None, :]


def decoder_self_mask(tgt_keep: torch.Tensor, causal: bool) -> torch.Tensor:
    """tgt_keep: (B, m) -> (B, 1, m, m): the causal mask (if on) combined with target padding."""
    m = tgt_keep.shape[1]
    base = causal_mask(m, tgt_keep.device) if causal else full_mask(m, tgt_keep.device)
    return base & padding_mask(tgt_keep)
