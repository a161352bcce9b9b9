"""The data that crosses the seam inside model/: decoding options (`DecodeOptions`, defined in
model.engine.options), a raw run in ids and arrays, the incremental decoder (`Stepper`) an engine hands to the
one decoding loop, and `Decoder`, what that loop needs of an engine."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import torch
from attention_lens.model.engine.options import DecodeOptions

__all__ = ["ContributionParts", "DecodeOptions", "Decoder", "Features", "RawRun", "Stepper"]


class Features(Sequence[int]):
    """A source that is not token ids: the input features a speech model's encoder reads (Whisper: the log-mel of
    its whole window, (n_mels, frames)). The decoding loop, beam search and a RawRun see it as what it is on the
    source axis, its encoder positions 0 .. n_positions - 1 (len, indexing and `list(...)` give those); the
    family's own passes read `.features`."""

    def __init__(self, features: torch.Tensor, n_positions: int) -> None:
        self.features = features
        self.n_positions = int(n_positions)

    def __len__(self) -> int:
        return self.n_positions

    def __getitem__(self, index):  # a position, or a list of them for a slice
        return range(self.n_positions)[index] if isinstance(index, int) else list(range(self.n_positions)[index])

    def __repr__(self) -> str:
        return f"Features({tuple(self.features.shape)}, {self.n_positions} positions)"


@dataclass
class RawRun:
    """One decoding run in ids and arrays. Attention arrays are (layers, heads, queries, keys)."""

    src_ids: list[int]  # a speech model: the encoder positions of the source axis (model.engine.audio_axis)
    dec_in_ids: list[int]  # m: the id each decoder position read
    out_ids: list[int]  # m: the id each position predicted (teacher forcing: the reference label)
    logits: np.ndarray  # (m, V)
    enc_attn: np.ndarray  # (L_enc, h, n, n)
    dec_attn: np.ndarray  # (L_dec, h, m, m)
    cross_attn: np.ndarray  # (L_dec, h, m, n)
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class ContributionParts:
    """What an engine's replay of one run returns for contributions (model.engine.contributions)."""

    value_norms: dict[str, np.ndarray]  # trace kind -> (layers, h, keys): ||v_j W_O^h||, 0 for a head switched off
    residual_norms: np.ndarray  # (L_dec, m): ||x_i||, the decoder residual stream at each layer's input


class Stepper(ABC):
    """One encoded batch of sources, decoded one position per call with the engine's key-value cache."""

    enc_attentions: list[torch.Tensor]  # per encoder layer (B, h, n, n), over the padded sources

    @abstractmethod
    def step(self, last: torch.Tensor, t: int) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """last (width, 1): the ids read at position t -> (logits (width, V), decoder self-attention per layer
        (width, h, 1, t+1), cross-attention per layer (width, h, 1, n)). A batch of one source may be stepped
        at any width (beam search): the encoder output is shared by every row."""

    @abstractmethod
    def reorder(self, index: torch.Tensor) -> None:
        """Make the cache follow the kept rows: row i of the next step continues row index[i] of this one."""

    @abstractmethod
    def cache_rows(self) -> list[tuple[int, int]]:
        """Per decoder layer, the positions its cache holds now, read off the cached tensors themselves:
        (self-attention key/value rows, cross-attention key/value rows). Before the first step a family shows what
        it has made so far: ours the cross-attention keys/values, (0, n) per layer; Hugging Face nothing, []."""

    @abstractmethod
    def recompute(self, prefix: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor], list[torch.Tensor]]:
        """prefix (width, T): every decoder position from scratch, without the cache (and without changing it),
        reusing only the encoder output -> the last position's (logits (width, V), decoder self-attention per
        layer (width, h, 1, T), cross-attention per layer (width, h, 1, n)), as `step` returns them."""

    def contribution_parts(self, b: int, run: RawRun) -> ContributionParts | None:
        """The ContributionParts of row b's finished run, reusing this batch's encoding; None (the default):
        the engine replays the run instead (Engine.contribution_parts)."""
        return None


class Decoder(Protocol):
    """What the one decoding loop (model.engine.decode) and beam search (model.engine.beam) need of an engine,
    and all they touch: its decoding constants, a Stepper for a batch of sources, and three decoding choices.
    Every `Engine` is one (model.engine.contract defines these members); so may be a test's stand-in."""

    start_id: int  # the id decoder position 0 reads
    end_id: int  # written after a row has ended when the model has no padding id
    eos_ids: frozenset[int]  # every id that ends a decoded sentence
    pad_id: int | None  # written after a row has ended
    n_heads: int  # beam search's attention arrays are (layers, n_heads, ...)

    def start_decoding(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool) -> Stepper:
        """Encode a batch of sources; the Stepper that decodes them."""

    def forced_prefix(self, options: DecodeOptions) -> tuple[int, ...]:
        """Target ids taken, not chosen, at the first steps."""

    def restrict(self, logits: torch.Tensor, free_step: int = 0) -> torch.Tensor:
        """Logits of a free choice with the ids the family never chooses made impossible; free_step: how many
        tokens were chosen freely before this one (0: the first choice after the forced prefix)."""

    def decode_length(self, options: DecodeOptions, n: int) -> int:
        """Steps at the most for a batch whose longest source has n tokens."""
