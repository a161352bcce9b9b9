"""The encoder-decoder Transformer of Vaswani et al. (2017), post-LN, with attention returned as values.

Every forward function returns the attention weights it computed, one tensor per layer shaped
(B, h, queries, keys); nothing is stored on the modules, so one loaded model can serve many callers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from model.attention import MultiHeadAttention
from model.config import ModelConfig
from model.masks import padding_mask


def sinusoidal_positions(length: int, d_model: int, start: int = 0) -> torch.Tensor:
    """(length, d_model): PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = torch.arange(start, start + length, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


class FeedForward(nn.Module):
    """Position-wise Linear -> ReLU -> Linear."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class EncoderLayer(nn.Module):
    """x -> LayerNorm(x + SelfAttn(x)) -> LayerNorm(. + FFN(.))  (post-LN, as in the paper)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = True):
        """x: (B, n, d_model); mask: (B, 1, 1, n) -> (x, weights (B, h, n, n) or None)."""
        k, v = self.self_attn.project_kv(x)
        a, w = self.self_attn(x, k, v, mask, need_weights)
        x = self.norm1(x + self.drop(a))
        x = self.norm2(x + self.drop(self.ff(x)))
        return x, w


@dataclass
class LayerCache:
    """Key-value cache of one decoder layer: self-attention keys/values grow by one row per step;
    cross-attention keys/values are projected from the encoder memory once and reused."""

    self_k: torch.Tensor | None  # (B, h, t, d_k)
    self_v: torch.Tensor | None
    cross_k: torch.Tensor  # (B, h, n, d_k)
    cross_v: torch.Tensor

    def select(self, index: torch.Tensor) -> LayerCache:
        """Reorder the batch (beam search): index (B',) of rows to keep."""
        return LayerCache(self.self_k.index_select(0, index), self.self_v.index_select(0, index),
                          self.cross_k.index_select(0, index), self.cross_v.index_select(0, index))


class DecoderLayer(nn.Module):
    """Masked self-attention, then cross-attention to the final encoder output, then the FFN; each post-LN."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, y: torch.Tensor, cache: LayerCache, self_mask: torch.Tensor, cross_mask: torch.Tensor,
                need_weights: bool = True):
        """y: (B, T, d_model) new decoder positions; cache holds earlier positions' keys/values.

        self_mask: (B|1, 1, T, t_prev + T); cross_mask: (B, 1, 1, n).
        Returns (y, new cache, self weights (B, h, T, t_prev + T), cross weights (B, h, T, n)).
        """
        k, v = self.self_attn.project_kv(y)
        if cache.self_k is not None:
            k = torch.cat([cache.self_k, k], dim=2)
            v = torch.cat([cache.self_v, v], dim=2)
        a, w_self = self.self_attn(y, k, v, self_mask, need_weights)
        y = self.norm1(y + self.drop(a))
        c, w_cross = self.cross_attn(y, cache.cross_k, cache.cross_v, cross_mask, need_weights)
        y = self.norm2(y + self.drop(c))
        y = self.norm3(y + self.drop(self.ff(y)))
        return y, LayerCache(k, v, cache.cross_k, cache.cross_v), w_self, w_cross


@dataclass
class Encoded:
    memory: torch.Tensor  # (B, n, d_model), the final encoder output
    src_keep: torch.Tensor  # (B, n) True for real tokens
    attentions: list[torch.Tensor | None]  # per layer (B, h, n, n)


@dataclass
class DecoderOutput:
    logits: torch.Tensor  # (B, T, V)
    caches: list[LayerCache]
    self_attentions: list[torch.Tensor | None]  # per layer (B, h, T, t_prev + T)
    cross_attentions: list[torch.Tensor | None]  # per layer (B, h, T, n)


class Transformer(nn.Module):
    """Encoder-decoder Transformer. `encode` once, then `decode` whole sequences or one step at a time."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.cfg = cfg
        self.src_embed = nn.Embedding(cfg.src_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.tgt_embed = nn.Embedding(cfg.tgt_vocab_size, cfg.d_model, padding_idx=cfg.pad_id)
        self.encoder = nn.ModuleList(EncoderLayer(cfg) for _ in range(cfg.n_encoder_layers))
        self.decoder = nn.ModuleList(DecoderLayer(cfg) for _ in range(cfg.n_decoder_layers))
        self.generator = nn.Linear(cfg.d_model, cfg.tgt_vocab_size)
        self.drop = nn.Dropout(cfg.dropout)
        for p in self.parameters():
            if p.dim() > 1:
                nn.init.xavier_uniform_(p)

    def _embed(self, table: nn.Embedding, ids: torch.Tensor, start: int = 0) -> torch.Tensor:
        """ids (B, T) -> (B, T, d_model): embeddings scaled by sqrt(d_model) plus sinusoidal positions."""
        pe = sinusoidal_positions(ids.shape[1], self.cfg.d_model, start).to(ids.device)
        return self.drop(table(ids) * math.sqrt(self.cfg.d_model) + pe)

    def encode(self, src: torch.Tensor, src_keep: torch.Tensor, need_weights: bool = True) -> Encoded:
        """src: (B, n) ids; src_keep: (B, n) bool. Unmasked except for padding keys."""
        x = self._embed(self.src_embed, src)
        mask = padding_mask(src_keep)
        attns = []
        for layer in self.encoder:
            x, w = layer(x, mask, need_weights)
            attns.append(w)
        return Encoded(x, src_keep, attns)

    def init_caches(self, enc: Encoded) -> list[LayerCache]:
        """Project the encoder memory to each decoder layer's cross-attention keys/values, once."""
        caches = []
        for layer in self.decoder:
            k, v = layer.cross_attn.project_kv(enc.memory)
            caches.append(LayerCache(None, None, k, v))
        return caches

    def decode(self, tgt_in: torch.Tensor, enc: Encoded, self_mask: torch.Tensor,
               caches: list[LayerCache] | None = None, start: int = 0, need_weights: bool = True) -> DecoderOutput:
        """tgt_in: (B, T) ids read by decoder positions start .. start+T-1.

        self_mask: (B|1, 1, T, start + T) bool. With caches=None the cross keys/values are projected here.
        """
        if caches is None:
            caches = self.init_caches(enc)
        y = self._embed(self.tgt_embed, tgt_in, start)
        cross_mask = padding_mask(enc.src_keep)
        new_caches, self_attns, cross_attns = [], [], []
        for layer, cache in zip(self.decoder, caches):
            y, cache, w_self, w_cross = layer(y, cache, self_mask, cross_mask, need_weights)
            new_caches.append(cache)
            self_attns.append(w_self)
            cross_attns.append(w_cross)
        return DecoderOutput(self.generator(y), new_caches, self_attns, cross_attns)
