"""The engine for this project's own checkpoints: the contract of model.engine on our Transformer."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import torch
from attention_lens.model.builtin.ablation import head_off_nll
from attention_lens.model.builtin.attention import NO_BUGS, Bugs
from attention_lens.model.builtin.batch import cross_attention_batch, teacher_forced_batch
from attention_lens.model.builtin.checkpoint import Checkpoint, load_checkpoint
from attention_lens.model.builtin.config import UNK_ID
from attention_lens.model.builtin.contributions import contribution_parts, parts_of
from attention_lens.model.builtin.lens import layer_logits
from attention_lens.model.builtin.normalise import normalise
from attention_lens.model.builtin.saliency import embedded_run
from attention_lens.model.builtin.transformer import Encoded, Transformer
from attention_lens.model.builtin.vocabulary import lexicon, unknown_words
from attention_lens.model.builtin.word_counts import WORD, words_of
from attention_lens.model.engine.bugs import BUGS, swap_error
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.masks import causal_mask
from attention_lens.model.engine.runs import ContributionParts, DecodeOptions, RawRun, Stepper
from attention_lens.model.engine.tensors import pad_batch
from attention_lens.model.engine.text import MAX_INPUT_CHARS, clean


class BuiltinStepper(Stepper):
    """Our Transformer's key-value cache over one encoded batch."""

    def __init__(self, model: Transformer, srcs: list[list[int]], need_weights: bool,
                 keep: dict[str, torch.Tensor | None], bugs: Bugs = NO_BUGS) -> None:
        self.model, self.need_weights, self.head_keep, self.bugs = model, need_weights, keep, bugs
        self.keep = (keep["dec"], keep["cross"])
        src, src_keep = pad_batch(srcs, model.cfg.pad_id)
        self.device = model.src_embed.weight.device
        self.enc = model.encode(src.to(self.device), src_keep.to(self.device), need_weights, keep["enc"], bugs)
        self.enc_attentions = list(self.enc.attentions)
        self.caches = model.init_caches(self.enc)

    def step(self, last: torch.Tensor, t: int):
        enc = self.enc
        width = last.shape[0]
        if width != enc.memory.shape[0]:  # beam search: one source, several hypotheses
            enc = type(enc)(enc.memory.expand(width, -1, -1), enc.src_keep.expand(width, -1), [])
        # The newest query sees every position so far: no mask.
        out = self.model.decode(last.to(self.device), enc, None, self.caches, start=t, need_weights=self.need_weights,
                                keep=self.keep, bugs=self.bugs)
        self.caches = out.caches
        return out.logits[:, -1], out.self_attentions, out.cross_attentions

    def reorder(self, index: torch.Tensor) -> None:
        index = index.to(self.device)
        self.caches = [c.select(index) for c in self.caches]

    def cache_rows(self) -> list[tuple[int, int]]:
        return [(0 if c.self_k is None else c.self_k.shape[2], c.cross_k.shape[2]) for c in self.caches]

    def recompute(self, prefix: torch.Tensor):
        prefix = prefix.to(self.device)
        out = self.model.decode(prefix, self.enc, causal_mask(prefix.shape[1], self.device), need_weights=True,
                                keep=self.keep,
                                bugs=self.bugs)  # caches=None: the cross keys/values are projected again too
        return (out.logits[:, -1], [w[:, :, -1:] for w in out.self_attentions],
                [w[:, :, -1:] for w in out.cross_attentions])

    def contribution_parts(self, b: int, run: RawRun) -> ContributionParts:
        """Row b's decoder replayed in one pass over this batch's encoding (the encoder is not run again)."""
        n = len(run.src_ids)
        e = self.enc
        enc = Encoded(e.memory[b:b + 1, :n], e.src_keep[b:b + 1, :n], [], [x[b:b + 1, :n] for x in e.inputs])
        dec = torch.tensor([run.dec_in_ids], device=self.device)
        out = self.model.decode(dec, enc, causal_mask(dec.shape[1], self.device), need_weights=False, keep=self.keep)
        return parts_of(self.model, enc, out, self.head_keep, 0, n, dec.shape[1])


RARE_COUNT = 3  # a typed word seen fewer times than this in training is named in the notice
BYTE_PIECE = re.compile(r"<0x[0-9A-F]{2}>")  # SentencePiece's byte fallback: a character it has no piece for


def bugs_of(options: DecodeOptions) -> Bugs:
    """The bug switches of a run's options, as our Transformer takes them."""
    return Bugs(options.mask_after_softmax, options.unscaled, options.swap_cross)


class BuiltinEngine(Engine):
    family = "builtin"
    switch_notes: dict[str, str] = {}  # both switches work: nothing to explain
    bug_switches = frozenset(BUGS)  # and the three bug switches too

    def __init__(self, ckpt: Checkpoint, name: str | None = None) -> None:
        self.ckpt = ckpt
        self.model = ckpt.model
        self.cfg = ckpt.config
        self.card = ckpt.card
        weight = self.model.src_embed.weight
        self.device, self.dtype = weight.device, weight.dtype
        self.name = name or (ckpt.path.name if ckpt.path else "model")
        self.n_encoder_layers = self.cfg.n_encoder_layers
        self.n_decoder_layers = self.cfg.n_decoder_layers
        self.n_heads = self.cfg.n_heads
        self.max_source_tokens = self.max_target_tokens = self.cfg.max_positions
        self.start_id, self.end_id, self.pad_id = self.cfg.bos_id, self.cfg.eos_id, self.cfg.pad_id
        self.eos_ids = frozenset({self.cfg.eos_id})
        self._source, self._target = ckpt.source_tokenizer, ckpt.target_tokenizer
        self._src_words = frozenset(self._source.words())
        self._tgt_words = frozenset(self._target.words())
        # A model trained on text as people type it (card "text": "raw") reads it as typed: only cleaned.
        self.raw_text = self.card.get("text") == "raw"

    @classmethod
    def load(cls, folder: Path, device: torch.device | None = None, dtype: torch.dtype = torch.float32
             ) -> BuiltinEngine:
        """The checkpoint in `folder`, its model placed on `device` (None: the CPU) with weights of `dtype`."""
        ckpt = load_checkpoint(folder)
        if (device is not None and device.type != "cpu") or dtype != torch.float32:
            ckpt.model.to(device=device, dtype=dtype)
        return cls(ckpt)

    # ---- text ---------------------------------------------------------------------------------------------
    def normalise(self, text: str) -> str:
        if self.raw_text:
            return clean(text, MAX_INPUT_CHARS)
        return normalise(text, self._src_words, self._source_pieces)

    def normalise_target(self, text: str) -> str:
        if self.raw_text:
            return clean(text, MAX_INPUT_CHARS)
        return normalise(text, self._tgt_words, self._target_pieces)

    def _source_pieces(self, word: str) -> int:
        return len(self._source.encode(word).ids)

    def _target_pieces(self, word: str) -> int:
        return len(self._target.encode(word).ids)

    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        tok = self._source.encode(text)
        return [*tok.ids, self.cfg.eos_id], [*tok.pieces, self._source.piece(self.cfg.eos_id)]

    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        ids = list(self._target.encode(text).ids)
        return [*(ids[: self.cfg.max_positions - 1] if truncate else ids), self.cfg.eos_id]

    def piece(self, token_id: int) -> str:
        return self._target.piece(token_id)

    def source_piece(self, token_id: int) -> str:
        return self._source.piece(token_id)

    def piece_to_id(self, piece: str) -> int | None:
        i = self._target.piece_to_id(piece)
        return i if self.piece(i) == piece else None

    def detokenize(self, ids: list[int]) -> str:
        return self._target.decode(ids)

    def special_ids(self) -> set[int]:
        return {self.cfg.pad_id, self.cfg.bos_id, self.cfg.eos_id}

    def unknown_pieces(self) -> frozenset[str]:
        return frozenset({self.piece(UNK_ID), self.source_piece(UNK_ID)})

    def unknown_words(self, normalised: str) -> list[str]:
        """Corpus conventions: words that are not one whole-word piece of the source vocabulary
        (model.builtin.vocabulary). Typed text: words seen fewer than RARE_COUNT times in the training text
        (its source_words.tsv); without that file, none can be named."""
        if not self.raw_text:
            return unknown_words(normalised, self._known_words())
        counts = self.ckpt.source_counts
        if counts is None:
            return []
        found = []
        for chunk in normalised.split():
            found += [w for w in words_of(chunk) if self._unseen(w, counts)]
            # what is left of the chunk besides its words: a symbol read as raw bytes (🙂) is unknown too
            found += [rest for rest in WORD.sub(" ", chunk).split() if self._read_as_bytes(rest)]
        return list(dict.fromkeys(found))

    def _read_as_bytes(self, text: str) -> bool:
        """The source tokenizer has no piece for (part of) text: it reads it as the unknown piece or as bytes."""
        unknown = self.unknown_pieces()
        return any(p in unknown or BYTE_PIECE.fullmatch(p) for p in self._source.encode(text).pieces)

    def _unseen(self, word: str, counts: dict[str, int]) -> bool:
        """A typed word this model does not know: read as bytes, or seen fewer than RARE_COUNT times, or a
        spelling its case-folded counts merged with another (`_respelled`)."""
        if self._read_as_bytes(word):
            return True
        return self._respelled(word) or counts.get(word.casefold(), 0) < RARE_COUNT

    def _word_pieces(self, word: str) -> list[str]:
        return [p for p in self._source.encode(word).pieces if p != "▁"]

    def _respelled(self, word: str) -> bool:
        """The counts are case-folded, which merges spellings the case-keeping tokenizer reads apart: `daß`
        (counted as `dass`) counts as seen only when its lower-case spelling is one whole piece; a word with
        capitals past its first letter (`WHERE`, `StAtIoN`, counted as `where`, `station`) only when it is one
        whole piece itself or its lower-case form is not one either (an acronym such as `TV` read in pieces
        either way)."""
        lower = word.lower()
        if word.casefold() != lower:
            return len(self._word_pieces(lower)) > 1
        if word in (lower, word[:1] + word[1:].lower()):  # all lower case, or capitalised like a first word
            return False
        return len(self._word_pieces(lower)) == 1 and len(self._word_pieces(word)) > 1

    def source_word_counts(self) -> dict[str, int] | None:
        """The training text's word counts (source_words.tsv) of a model trained on typed text."""
        return self.ckpt.source_counts

    def word_note(self, word: str) -> str:
        counts = self.ckpt.source_counts
        if not self.raw_text or counts is None:
            return ""
        n = counts.get(word.casefold(), 0)
        seen = "never seen in training" if n == 0 else f"seen {n} time{'s' * (n != 1)} in training"
        if n and self._respelled(word):  # the counts merge this spelling with another
            seen = f"not seen in this spelling, only as “{word.casefold()}”"
        return f"{seen}; read as {' '.join(self._source.encode(word).pieces)}"

    def _known_words(self) -> frozenset[str]:
        """Whole-word pieces; for a corpus pair, only those that are words of its lexicon (a 1000-piece BPE
        vocabulary also holds merges such as `▁you` that no training sentence contains as a word)."""
        forms = {w for entries in self.lexicon().values() for entry in entries for w in entry}
        return frozenset(w for w in self._src_words if w in forms or not w.isalpha()) if forms else self._src_words

    def lexicon(self) -> dict[str, list[tuple[str, ...]]]:
        return lexicon(self.card.get("pair") if "data" not in self.card else None, self._src_words)

    # ---- forward passes -----------------------------------------------------------------------------------
    def teacher_forced_batch(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                             need_weights: bool = True) -> list[RawRun]:
        self.check_options(options)
        if options.swap_cross:
            for src, lab in zip(srcs, labels):
                if len(src) != len(lab):
                    raise ModelInputError(swap_error(len(src), len(lab)))
        return teacher_forced_batch(self.model, srcs, labels, options.causal, options.shift, need_weights,
                                    self.head_masks(options), need_parts=options.contributions,
                                    bugs=bugs_of(options))

    def cross_attention_batch(self, srcs: list[list[int]], labels: list[list[int]],
                              options: DecodeOptions) -> list[np.ndarray]:
        if options.bugs or options.contributions or options.swap_cross:  # the full pass handles these
            return super().cross_attention_batch(srcs, labels, options)
        self.check_options(options)
        return cross_attention_batch(self.model, srcs, labels, options.causal, options.shift,
                                     self.head_masks(options))

    def head_off_nll(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                     heads: list[str]) -> np.ndarray:
        if options.bugs:  # the batched ablation runs the healthy computation only
            return super().head_off_nll(srcs, labels, options, heads)
        self.check_options(options)
        named = [(k, int(la), int(h)) for k, la, h in (spec.split(":") for spec in heads)]
        return head_off_nll(self.model, srcs, labels, options.causal, options.shift, named)

    def decoder_dims(self) -> dict[str, int]:
        cfg = self.cfg
        return {"d_model": cfg.d_model, "d_attn": cfg.d_model, "d_ff": cfg.d_ff, "ff_matrices": 2,
                "vocab": cfg.tgt_vocab_size}

    def start_decoding(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool) -> Stepper:
        self.check_bugs(options)
        return BuiltinStepper(self.model, srcs, need_weights, self.head_masks(options), bugs_of(options))

    def contribution_parts(self, run: RawRun, options: DecodeOptions) -> ContributionParts:
        causal = options.causal_mask
        return contribution_parts(self.model, run, causal, self.head_masks(options))

    def layer_logits(self, run: RawRun, options: DecodeOptions) -> torch.Tensor:
        return layer_logits(self.model, run, options.causal_mask,
                            self.head_masks(options))

    def embedded_run(self, run: RawRun, options: DecodeOptions, chosen: list[int]) -> EmbeddedRun:
        return embedded_run(self.model, run, chosen, options.causal_mask,
                            self.head_masks(options))
