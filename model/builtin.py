"""The engine for this project's own checkpoints."""

from __future__ import annotations

from pathlib import Path

import torch

from model.checkpoint import Checkpoint, load_checkpoint
from model.decoding import beam_search, default_max_len, generate_batch, teacher_forced_batch
from model.engine import DecodeOptions, Engine, RawRun
from model.text import normalise


class BuiltinEngine(Engine):
    family = "builtin"

    def __init__(self, ckpt: Checkpoint, name: str | None = None) -> None:
        self.ckpt = ckpt
        self.model = ckpt.model
        self.cfg = ckpt.config
        self.card = ckpt.card
        self.name = name or (ckpt.path.name if ckpt.path else "model")
        self.n_encoder_layers = self.cfg.n_encoder_layers
        self.n_decoder_layers = self.cfg.n_decoder_layers
        self.n_heads = self.cfg.n_heads
        self.max_source_tokens = self.max_target_tokens = self.cfg.max_positions
        self._src_words = frozenset(ckpt.source_tokenizer.words())
        self._tgt_words = frozenset(ckpt.target_tokenizer.words())

    @classmethod
    def load(cls, folder: Path) -> BuiltinEngine:
        return cls(load_checkpoint(folder))

    def normalise(self, text: str) -> str:
        return normalise(text, self._src_words, self._source_pieces)

    def normalise_target(self, text: str) -> str:
        return normalise(text, self._tgt_words, self._target_pieces)

    def _source_pieces(self, word: str) -> int:
        return len(self.ckpt.source_tokenizer.encode(word).ids)

    def _target_pieces(self, word: str) -> int:
        return len(self.ckpt.target_tokenizer.encode(word).ids)

    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        tok = self.ckpt.source_tokenizer.encode(text)
        return [*tok.ids, self.cfg.eos_id], [*tok.pieces, self.ckpt.source_tokenizer.piece(self.cfg.eos_id)]

    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        ids = list(self.ckpt.target_tokenizer.encode(text).ids)
        return [*(ids[: self.cfg.max_positions - 1] if truncate else ids), self.cfg.eos_id]

    def piece(self, token_id: int) -> str:
        return self.ckpt.target_tokenizer.piece(token_id)

    def piece_to_id(self, piece: str) -> int | None:
        i = self.ckpt.target_tokenizer.sp.piece_to_id(piece)
        return i if self.piece(i) == piece else None

    def source_piece(self, token_id: int) -> str:
        return self.ckpt.source_tokenizer.piece(token_id)

    def detokenize(self, ids: list[int]) -> str:
        return self.ckpt.target_tokenizer.decode(ids)

    def special_ids(self) -> set[int]:
        return {self.cfg.pad_id, self.cfg.bos_id, self.cfg.eos_id}

    def _to_trace(self, run, options, normalised, warnings):
        trace = super()._to_trace(run, options, normalised, warnings)
        # Source pieces come from the source vocabulary, not the target one.
        src = tuple(self.source_piece(i) for i in run.src_ids)
        return type(trace)(**{**trace.__dict__, "source_tokens": src})

    def run_teacher_forced(self, src_ids: list[int], labels: list[int], causal: bool, shift: bool) -> RawRun:
        return teacher_forced_batch(self.model, [src_ids], [labels], causal, shift)[0]

    def run_generate(self, src_ids: list[int], options: DecodeOptions) -> RawRun:
        return generate_batch(self.model, [src_ids], options)[0]

    def run_beam(self, src_ids: list[int], options: DecodeOptions):
        runs, steps = beam_search(self.model, src_ids, options)
        named = [[{"tokens": [self.piece(i) for i in b["tokens"]], "score": b["score"]} for b in s] for s in steps]
        return runs, named

    def teacher_forced_logits(self, srcs, labels, causal, shift):
        runs = teacher_forced_batch(self.model, srcs, labels, causal, shift, need_weights=False)
        return [r.logits for r in runs]

    @torch.no_grad()
    def translate_batch(self, sources: list[str], max_len: int | None = None) -> list[str]:
        srcs = [self.fit_source(self.encode_source(s)[0]) for s in sources]
        opts = DecodeOptions(max_len=max_len or default_max_len(self.cfg, max(len(s) for s in srcs)))
        runs = generate_batch(self.model, srcs, opts, need_weights=False)
        return [self.detokenize(r.out_ids) for r in runs]
