"""The engine API: what every model family provides, and how its raw runs become Traces.

A new model family is a new subclass of `Engine`. Options are arguments (`DecodeOptions`); an engine
never changes its loaded model, so one engine can serve every session of a server.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from model.trace import MODES, Step, Trace


@dataclass(frozen=True)
class DecodeOptions:
    mode: str = "greedy"  # greedy | beam | sample | teacher_forced
    causal: bool = True  # teacher forcing only: free-running decoding cannot see the future anyway
    shift: bool = True  # teacher forcing only: free-running decoding always reads the previous token
    beam_size: int = 4
    temperature: float = 1.0
    top_k: int = 0  # sampling: keep the k most likely tokens (0 = all)
    seed: int = 0
    max_len: int | None = None  # None: the engine's default for the source length
    forced: tuple[int, ...] = ()  # free running: target ids chosen for the first steps, then continue
    report_top_k: int = 5

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {self.mode!r}")
        if self.beam_size < 1:
            raise ValueError("beam_size must be at least 1")
        if self.temperature <= 0:
            raise ValueError("temperature must be > 0")
        if self.top_k < 0 or self.report_top_k < 1:
            raise ValueError("top_k must be >= 0 and report_top_k >= 1")
        if self.max_len is not None and self.max_len < 1:
            raise ValueError("max_len must be at least 1")


@dataclass
class RawRun:
    """One decoding run in ids and arrays. Attention arrays are (layers, heads, queries, keys)."""

    src_ids: list[int]
    dec_in_ids: list[int]  # m: the id each decoder position read
    out_ids: list[int]  # m: the id each position predicted (teacher forcing: the reference label)
    logits: np.ndarray  # (m, V)
    enc_attn: np.ndarray  # (L_enc, h, n, n)
    dec_attn: np.ndarray  # (L_dec, h, m, m)
    cross_attn: np.ndarray  # (L_dec, h, m, n)
    score: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


def softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


class ModelInputError(ValueError):
    """The input cannot be run on this model (empty, longer than its positions, ...): a message for the user."""


class Engine(ABC):
    """Subclasses load one model and implement the raw runs; `trace` is shared."""

    name: str
    family: str
    n_encoder_layers: int
    n_decoder_layers: int
    n_heads: int
    max_source_tokens: int
    max_target_tokens: int
    supports_causal_switch: bool = True
    supports_shift_switch: bool = True
    card: dict[str, Any]

    @abstractmethod
    def normalise(self, text: str) -> str:
        """Natural input -> the text actually tokenised."""

    @abstractmethod
    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        """Normalised source text -> (ids fed to the encoder, their pieces), special tokens included."""

    @abstractmethod
    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        """Target text -> label ids, ending with the end-of-sentence id; at most `max_target_tokens` of them
        unless truncate is False."""

    @abstractmethod
    def piece(self, token_id: int) -> str: ...

    @abstractmethod
    def detokenize(self, ids: list[int]) -> str: ...

    @abstractmethod
    def run_teacher_forced(self, src_ids: list[int], labels: list[int], causal: bool, shift: bool) -> RawRun: ...

    @abstractmethod
    def run_generate(self, src_ids: list[int], options: DecodeOptions) -> RawRun: ...

    @abstractmethod
    def run_beam(self, src_ids: list[int], options: DecodeOptions) -> tuple[list[RawRun], list[list[dict]]]: ...

    @abstractmethod
    def translate_batch(self, sources: list[str], max_len: int | None = None) -> list[str]:
        """Greedy translations of normalised sources, batched, without capturing attention."""

    def special_ids(self) -> set[int]:
        return set()

    def piece_to_id(self, piece: str) -> int | None:
        """The target-vocabulary id of a piece, or None when the vocabulary has no such piece."""
        return None

    def teacher_forced_logits(self, srcs: list[list[int]], labels: list[list[int]], causal: bool,
                              shift: bool) -> list[np.ndarray]:
        """Logits (m, V) of teacher forcing for each pair; engines may batch this."""
        return [self.run_teacher_forced(s, lab, causal, shift).logits for s, lab in zip(srcs, labels)]

    def model_info(self) -> dict[str, Any]:
        return {"name": self.name, "family": self.family, "encoder_layers": self.n_encoder_layers,
                "decoder_layers": self.n_decoder_layers, "heads": self.n_heads}

    def prepare_source(self, text: str) -> tuple[str, list[int], list[str], list[str]]:
        """Normalise and tokenise; returns (normalised text, ids, pieces, warnings). Long input is truncated
        to the model's positions with a warning; empty input raises ModelInputError."""
        normalised = self.normalise(text)
        if not normalised.strip():
            raise ModelInputError("The source text is empty: type a sentence.")
        ids, pieces = self.encode_source(normalised)
        warnings = []
        if len(ids) > self.max_source_tokens:
            warnings.append(f"The source has {len(ids)} tokens; this model reads at most {self.max_source_tokens}, "
                            f"so it was truncated to the first {self.max_source_tokens}.")
            ids, pieces = self.fit_source(ids), self.fit_source(pieces)
        return normalised, ids, pieces, warnings

    def fit_source(self, seq: list) -> list:
        """A source (ids or pieces) cut to the model's positions: the first max-1 and the final special token."""
        if len(seq) <= self.max_source_tokens:
            return seq
        return seq[: self.max_source_tokens - 1] + seq[-1:]

    def prepare_target(self, text: str) -> tuple[list[int], list[str]]:
        """Reference target -> (label ids, warnings): like the source, a target longer than the model's
        positions is truncated (its end token kept) with a warning rather than silently."""
        normalised = self.normalise_target(text)
        if not normalised.strip():
            raise ModelInputError("Teacher forcing needs a reference target: the one given is empty.")
        labels = self.encode_target(normalised, truncate=False)
        limit = self.max_target_tokens
        if len(labels) <= limit:
            return labels, []
        return labels[: limit - 1] + labels[-1:], [
            f"The reference target has {len(labels)} tokens; this model reads at most {limit}, so it was "
            f"truncated to the first {limit}."]

    def trace(self, text: str, target: str | None = None, options: DecodeOptions | None = None) -> Trace:
        """One decoding run (or, with a target or mode="teacher_forced", one teacher-forced pass)."""
        options = options or DecodeOptions()
        normalised, src_ids, _, warnings = self.prepare_source(text)
        if target is not None or options.mode == "teacher_forced":
            if target is None or not target.strip():
                raise ModelInputError("Teacher forcing needs a reference target.")
            if options.mode != "teacher_forced":
                options = DecodeOptions(**{**asdict(options), "mode": "teacher_forced"})
            labels, target_warnings = self.prepare_target(target)
            run = self.run_teacher_forced(src_ids, labels, options.causal, options.shift)
            return self._to_trace(run, options, normalised, warnings + target_warnings)
        if options.mode == "beam":
            runs, beam_steps = self.run_beam(src_ids, options)
            beams = tuple(self._to_trace(r, options, normalised, warnings) for r in runs)
            best = beams[0]
            return Trace(**{**best.__dict__, "beams": beams, "beam_steps": tuple(tuple(s) for s in beam_steps)})
        run = self.run_generate(src_ids, options)
        return self._to_trace(run, options, normalised, warnings)

    def normalise_target(self, text: str) -> str:
        return self.normalise(text)

    def _to_trace(self, run: RawRun, options: DecodeOptions, normalised: str, warnings: list[str]) -> Trace:
        probs = softmax(run.logits.astype(np.float64))
        k = min(options.report_top_k, probs.shape[1])
        steps = []
        teacher = options.mode == "teacher_forced"
        for t in range(len(run.out_ids)):
            order = np.argsort(-probs[t])[:k]
            top = tuple((self.piece(int(i)), float(probs[t, i])) for i in order)
            if teacher:
                best = int(order[0])
                extra = {"target_prob": float(probs[t, run.out_ids[t]]), "correct": best == run.out_ids[t]}
                steps.append(Step(self.piece(best), best, float(probs[t, best]), top, extra))
            else:
                tid = run.out_ids[t]
                steps.append(Step(self.piece(tid), tid, float(probs[t, tid]), top))
        opts = {k2: v for k2, v in asdict(options).items() if k2 != "forced"}
        opts["forced"] = [self.piece(i) for i in options.forced]
        opts["normalised_source"] = normalised
        opts["warnings"] = warnings
        opts["score"] = run.score
        return Trace(model=self.model_info(), options=opts,
                     source_tokens=tuple(self.piece(i) for i in run.src_ids),
                     decoder_input_tokens=tuple(self.piece(i) for i in run.dec_in_ids),
                     target_tokens=tuple(self.piece(i) for i in run.out_ids),
                     encoder_self_attention=run.enc_attn.astype(np.float32),
                     decoder_self_attention=run.dec_attn.astype(np.float32),
                     cross_attention=run.cross_attn.astype(np.float32), steps=tuple(steps))
