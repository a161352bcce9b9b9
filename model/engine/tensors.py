"""Tensors in and out of a forward pass, the same for every family: ragged id lists padded into one batch, and
results turned into the numpy arrays a RawRun holds."""

from __future__ import annotations

import numpy as np
import torch


def pad_batch(seqs: list[list[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Ragged id lists -> (ids (B, T) right-padded with `pad_id`, keep (B, T) bool: True where a sequence has a
    token, by its length, so that an id equal to `pad_id` inside a sequence is still kept)."""
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad_id, dtype=torch.long)
    for i, s in enumerate(seqs):
        ids[i, : len(s)] = torch.tensor(s, dtype=torch.long)
    lengths = torch.tensor([len(s) for s in seqs])
    return ids, torch.arange(width)[None, :] < lengths[:, None]


def to_numpy(x: torch.Tensor) -> np.ndarray:
    """A tensor (any float dtype, any device, on the graph or not) -> a float32 numpy array on the CPU."""
    return x.detach().float().cpu().numpy()


def log_softmax(logits: np.ndarray) -> np.ndarray:
    """Log-probabilities over the last axis, computed stably (the maximum subtracted first)."""
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax(logits: np.ndarray) -> np.ndarray:
    """Probabilities over the last axis."""
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)
