"""The encoder-decoder Transformer of Vaswani et al. (2017), post-LN, with attention returned as values.

Every forward function returns the attention weights it computed, one tensor per layer shaped
(B, h, queries, keys); nothing is stored on the modules, so one loaded model can serve many callers.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import torch
from attention_lens.model.builtin.attention import NO_BUGS, Bugs, MultiHeadAttention
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.engine.bugs import swap_error
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.masks import padding_mask
from torch import nn


def sinusoidal_positions(length: int, d_model: int, start: int = 0) -> torch.Tensor:
    """(length, d_model): PE(pos, 2i) = sin(pos / 10000^(2i/d)), PE(pos, 2i+1) = cos(...)."""
    pos = torch.arange(start, start + length, dtype=torch.float32)[:, None]
    div = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model))
    pe = torch.zeros(length, d_model)
    pe[:, 0::2] = torch.sin(pos * div)
    pe[:, 1::2] = torch.cos(pos * div)
    return pe


@functools.lru_cache(maxsize=16)
def position_table(length: int, d_model: int) -> torch.Tensor:
    """sinusoidal_positions(length, d_model), computed once: a cached decoding step needs one row of it, and
    rebuilding the table every step was ~4% of a decode (benchmarks/RESULTS.md). Read-only, and made outside
    inference mode so that training may use it after a traced run in the same process."""
    with torch.inference_mode(False):
        return sinusoidal_positions(length, d_model)


def skip_in_eval(drop: nn.Dropout, x: torch.Tensor) -> torch.Tensor:
    """Dropout while training; in eval mode dropout is the identity, so it is not called at all."""
    return drop(x) if drop.training else x


class FeedForward(nn.Module):
    """Position-wise Linear -> ReLU -> Linear."""

    def __init__(self, d_model: int, d_ff: int, dropout: float) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Dropout(dropout), nn.Linear(d_ff, d_model))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # Called piece by piece: in eval the dropout is skipped rather than called as an identity module,
        # which is measurable per decoding step at this model size (benchmarks/RESULTS.md).
        lin1, relu, drop, lin2 = self.net
        return lin2(skip_in_eval(drop, relu(lin1(x))))


class EncoderLayer(nn.Module):
    """x -> LayerNorm(x + SelfAttn(x)) -> LayerNorm(. + FFN(.))  (post-LN, as in the paper)."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.scaled)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, x: torch.Tensor, mask: torch.Tensor, need_weights: bool = True,
                keep: torch.Tensor | None = None, bugs: Bugs = NO_BUGS):
        """x: (B, n, d_model); mask: (B, 1, 1, n); keep: (h,) head mask or None -> (x, weights (B, h, n, n)
        or None)."""
        k, v = self.self_attn.project_kv(x)
        a, w = self.self_attn(x, k, v, mask, need_weights, keep, bugs)
        x = self.norm1(x + skip_in_eval(self.drop, a))
        x = self.norm2(x + skip_in_eval(self.drop, self.ff(x)))
        return x, w


class KVStore:
    """Key/value buffers (B, h, capacity, d_k) with room to spare; `length` rows are used by the newest cache.

    Appending one step's keys with torch.cat copies the whole prefix every step (O(T^2) over a run, 16% of a
    256-token decode in the profile, benchmarks/RESULTS.md); writing into spare room is O(1) per step, and the
    room doubles when full (amortised O(T))."""

    def __init__(self, like: torch.Tensor, capacity: int) -> None:
        b, h, _, d_k = like.shape
        self.k = like.new_empty(b, h, capacity, d_k)
        self.v = like.new_empty(b, h, capacity, d_k)
        self.length = 0


@dataclass
class LayerCache:
    """Key-value cache of one decoder layer: self-attention keys/values grow by one row per step;
    cross-attention keys/values are projected from the encoder memory once and reused."""

    self_k: torch.Tensor | None  # (B, h, t, d_k)
    self_v: torch.Tensor | None
    cross_k: torch.Tensor  # (B, h, n, d_k)
    cross_v: torch.Tensor
    store: KVStore | None = None  # the buffers self_k / self_v are prefixes of, when grown step by step

    def extend(self, k: torch.Tensor, v: torch.Tensor) -> LayerCache:
        """The cache with k, v (B, h, T, d_k) appended after the earlier positions.

        The first call (nothing cached: a full pass, or training) keeps k, v as they are. Later calls write into
        the store in place, but only when this cache is the newest user of the store: extending an older cache
        again (a branch) copies its prefix into a fresh store, so no other cache's rows are ever overwritten.
        """
        if self.self_k is None:
            return LayerCache(k, v, self.cross_k, self.cross_v)
        t_prev = self.self_k.shape[2]
        t_new = t_prev + k.shape[2]
        store = self.store
        if store is None or store.length != t_prev or store.k.shape[2] < t_new:
            store = KVStore(k, max(2 * t_new, 16))
            store.k[:, :, :t_prev] = self.self_k
            store.v[:, :, :t_prev] = self.self_v
        store.k[:, :, t_prev:t_new] = k
        store.v[:, :, t_prev:t_new] = v
        store.length = t_new
        return LayerCache(store.k[:, :, :t_new], store.v[:, :, :t_new], self.cross_k, self.cross_v, store)

    def select(self, index: torch.Tensor) -> LayerCache:
        """Reorder the batch (beam search): index (B',) of rows to keep."""
        return LayerCache(self.self_k.index_select(0, index), self.self_v.index_select(0, index),
                          self.cross_k.index_select(0, index), self.cross_v.index_select(0, index))


class DecoderLayer(nn.Module):
    """Masked self-attention, then cross-attention to the final encoder output, then the FFN; each post-LN."""

    def __init__(self, cfg: ModelConfig) -> None:
        super().__init__()
        self.self_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.scaled)
        self.cross_attn = MultiHeadAttention(cfg.d_model, cfg.n_heads, cfg.scaled)
        self.ff = FeedForward(cfg.d_model, cfg.d_ff, cfg.dropout)
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.norm3 = nn.LayerNorm(cfg.d_model)
        self.drop = nn.Dropout(cfg.dropout)

    def forward(self, y: torch.Tensor, cache: LayerCache, self_mask: torch.Tensor | None,
                cross_mask: torch.Tensor | None, need_weights: bool = True,
                keep: tuple[torch.Tensor | None, torch.Tensor | None] = (None, None), bugs: Bugs = NO_BUGS,
                memory: torch.Tensor | None = None, need_self_weights: bool | None = None):
        """y: (B, T, d_model) new decoder positions; cache holds earlier positions' keys/values.

        self_mask: (B|1, 1, T, t_prev + T); cross_mask: (B, 1, 1, n); either None when nothing is masked.
        keep: the (h,) head masks of the self- and cross-attention, or None. memory: (B, n, d_model), the
        encoder output, read only with bugs.swap_cross. need_self_weights: whether the self-attention returns
        its weights (None: as need_weights; False: the fused kernel, when only the cross weights are wanted).
        Returns (y, new cache, self weights (B, h, T, t_prev + T), cross weights (B, h, T, n); with
        bugs.swap_cross (B, h, n, T): the source positions are the queries).
        """
        cache = cache.extend(*self.self_attn.project_kv(y))
        a, w_self = self.self_attn(y, cache.self_k, cache.self_v, self_mask,
                                   need_weights if need_self_weights is None else need_self_weights, keep[0], bugs)
        y = self.norm1(y + skip_in_eval(self.drop, a))
        if bugs.swap_cross:
            c, w_cross = self.swapped_cross(y, memory, self_mask, need_weights, keep[1], bugs)
        else:
            c, w_cross = self.cross_attn(y, cache.cross_k, cache.cross_v, cross_mask, need_weights, keep[1], bugs)
        y = self.norm2(y + skip_in_eval(self.drop, c))
        y = self.norm3(y + skip_in_eval(self.drop, self.ff(y)))
        return y, cache, w_self, w_cross

    def cross_weights(self, y: torch.Tensor, cross_k: torch.Tensor, self_mask: torch.Tensor | None,
                      cross_mask: torch.Tensor | None, keep_self: torch.Tensor | None = None) -> torch.Tensor:
        """The cross-attention weights forward gives (no cache before y, the self-attention through the fused
        kernel, no bugs), computed as it computes them, and nothing after them: no values, no output projection,
        no feed-forward. cross_k: (B, h, n, d_k) the cross keys; keep_self: the self-attention's head mask."""
        k, v = self.self_attn.project_kv(y)
        a, _ = self.self_attn(y, k, v, self_mask, False, keep_self)
        y = self.norm1(y + skip_in_eval(self.drop, a))
        return self.cross_attn.weights_only(y, cross_k, cross_mask)

    def swapped_cross(self, y: torch.Tensor, memory: torch.Tensor, self_mask: torch.Tensor | None,
                      need_weights: bool, keep: torch.Tensor | None, bugs: Bugs):
        """The bug: cross_attn(memory, y, y). Queries (B, n, d_model) from the source, keys and values from the
        decoder's T positions (padding keys masked, the future not). Its output has n rows, so adding it to
        the decoder's T rows fails unless n == T: the error is raised here, in plain words."""
        n, t = memory.shape[1], y.shape[1]
        if n != t:
            raise ModelInputError(swap_error(n, t))
        key_mask = None if self_mask is None else self_mask[:, :, -1:, :]  # the last row: the padding alone
        k, v = self.cross_attn.project_kv(y)
        return self.cross_attn(memory, k, v, key_mask, need_weights, keep, bugs)


@dataclass
class Encoded:
    memory: torch.Tensor  # (B, n, d_model), the final encoder output
    src_keep: torch.Tensor  # (B, n) True for real tokens
    attentions: list[torch.Tensor | None]  # per layer (B, h, n, n)
    inputs: list[torch.Tensor] | None = None  # per layer its input (B, n, d_model): the residual stream


@dataclass
class DecoderOutput:
    logits: torch.Tensor | None  # (B, T, V); None when decode was asked for no logits
    caches: list[LayerCache]
    self_attentions: list[torch.Tensor | None]  # per layer (B, h, T, t_prev + T)
    cross_attentions: list[torch.Tensor | None]  # per layer (B, h, T, n)
    inputs: list[torch.Tensor] | None = None  # per layer its input (B, T, d_model): the residual stream


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
        end = start + ids.shape[1]
        pe = position_table(max(end, self.cfg.max_positions), self.cfg.d_model)[start:end].to(
            device=ids.device, dtype=table.weight.dtype)
        return skip_in_eval(self.drop, table(ids) * math.sqrt(self.cfg.d_model) + pe)

    def encode(self, src: torch.Tensor, src_keep: torch.Tensor, need_weights: bool = True,
               keep: torch.Tensor | None = None, bugs: Bugs = NO_BUGS) -> Encoded:
        """src: (B, n) ids; src_keep: (B, n) bool. Unmasked except for padding keys.
        keep: (layers, h) head mask of the self-attention (ablation), or None. bugs: switched on for this run."""
        x = self._embed(self.src_embed, src)
        mask = padding_mask(src_keep)
        attns, inputs = [], []
        for i, layer in enumerate(self.encoder):
            inputs.append(x)
            x, w = layer(x, mask, need_weights, None if keep is None else keep[i], bugs)
            attns.append(w)
        return Encoded(x, src_keep, attns, inputs)

    def init_caches(self, enc: Encoded) -> list[LayerCache]:
        """Project the encoder memory to each decoder layer's cross-attention keys/values, once."""
        caches = []
        for layer in self.decoder:
            k, v = layer.cross_attn.project_kv(enc.memory)
            caches.append(LayerCache(None, None, k, v))
        return caches

    def decode(self, tgt_in: torch.Tensor, enc: Encoded, self_mask: torch.Tensor | None,
               caches: list[LayerCache] | None = None, start: int = 0, need_weights: bool = True,
               keep: tuple[torch.Tensor | None, torch.Tensor | None] = (None, None),
               bugs: Bugs = NO_BUGS, need_self_weights: bool | None = None, logits: bool = True) -> DecoderOutput:
        """tgt_in: (B, T) ids read by decoder positions start .. start+T-1.

        self_mask: (B|1, 1, T, start + T) bool, or None when every key may be attended (a cached step).
        With caches=None the cross keys/values are projected here. keep: (layers, h) head masks of the
        self- and cross-attention (ablation), each or both None. bugs: switched on for this run.
        need_self_weights=False: only the cross-attention weights are kept (DecoderLayer); logits=False: the
        output projection is skipped (what reads the attention alone, such as word alignment, needs no logits).
        """
        if caches is None:
            caches = self.init_caches(enc)
        y = self._embed(self.tgt_embed, tgt_in, start)
        cross_mask = None if bool(enc.src_keep.all()) else padding_mask(enc.src_keep)
        new_caches, self_attns, cross_attns, inputs = [], [], [], []
        for i, (layer, cache) in enumerate(zip(self.decoder, caches)):
            inputs.append(y)
            layer_keep = tuple(None if k is None else k[i] for k in keep)
            y, cache, w_self, w_cross = layer(y, cache, self_mask, cross_mask, need_weights, layer_keep, bugs,
                                              enc.memory, need_self_weights)
            new_caches.append(cache)
            self_attns.append(w_self)
            cross_attns.append(w_cross)
        return DecoderOutput(self.generator(y) if logits else None, new_caches, self_attns, cross_attns, inputs)

    def cross_attentions(self, tgt_in: torch.Tensor, enc: Encoded, self_mask: torch.Tensor | None,
                         keep: tuple[torch.Tensor | None, torch.Tensor | None] = (None, None)) -> list[torch.Tensor]:
        """Every decoder layer's cross-attention weights (B, h, T, n) of a whole-sequence pass, as
        decode(..., need_self_weights=False, logits=False) gives them, with the work nothing reads left out: the
        last layer stops at its weights (no cross values, output projection or feed-forward) and no logits."""
        y = self._embed(self.tgt_embed, tgt_in)
        cross_mask = None if bool(enc.src_keep.all()) else padding_mask(enc.src_keep)
        last = len(self.decoder) - 1
        out = []
        for i, layer in enumerate(self.decoder):
            keep_self, keep_cross = (None if k is None else k[i] for k in keep)
            if i == last:
                cross_k = layer.cross_attn._split(layer.cross_attn.w_k(enc.memory))
                out.append(layer.cross_weights(y, cross_k, self_mask, cross_mask, keep_self))
                break
            cache = LayerCache(None, None, *layer.cross_attn.project_kv(enc.memory))
            y, _, _, w_cross = layer(y, cache, self_mask, cross_mask, True, (keep_self, keep_cross),
                                     need_self_weights=False)
            out.append(w_cross)
        return out
