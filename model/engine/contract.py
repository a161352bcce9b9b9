"""The engine contract: everything a page, an export, an analysis or the CLI may ask of a model.

A model family is one subclass of `Engine` that fills in the abstract members: its text side (normalising,
tokenising, pieces of both vocabularies), one teacher-forced batch, and an incremental decoder (a `Stepper`:
one step and a cache reorder). Everything else, the one decoding loop (greedy, sampling, forced prefix, beam)
and the turning of raw runs into Traces, is written once here and in `model.engine.decode`. A caller never
reaches inside an engine (its network, its tokenizer): what it needs is a member below.

Which member runs a model, by what the caller has:

- text (and, for teacher forcing, a reference) -> a Trace: `trace`; many texts: `trace_batch`. The app, the
  CLI's `trace` and the analyses that read Traces use these.
- a clip (a speech model, `source_kind == "audio"`) -> a Trace: `trace(audio=...)`; the clip as a source for the
  id-level members below (a `Features`, and its place on the source axis): `audio_source`. A text model refuses
  audio, and a speech model refuses the text members of the source side (normalise, encode_source,
  prepare_source, trace of a text), each with a ModelInputError that says which it reads.
- ids of (source, labels) pairs -> teacher-forced RawRuns, every pair in one pass: `teacher_forced_batch`, the
  family's own pass (it checks the options first: `check_options`); need_weights=False for logits only
  (scores, the probe's perturbed runs, ablation). One pair, attention included: `run_teacher_forced`.
- ids of sources -> greedy or sampled RawRuns: `decode_batch` (the one loop, model.engine.decode); one source:
  `run_generate`. Beam search of one source (hypotheses and the live beams): `run_beam`.

`run_teacher_forced` and `run_generate` are one-input shorthands, one line each over `teacher_forced_batch` and
`decode_batch`: no code path of their own, so they cannot drift from the batched members. They stay because the
analyses that study one sentence under the causal and shift switches (model.analysis.leakage, probe, exposure)
and the engine parity tests ask for one run with `causal` / `shift` flags, where the batched form would wrap
every call in lists, build a DecodeOptions and take `[0]`.

Text in, text out over a test set is model.analysis.scores.translate_all, written on `decode_batch`. What the
decoding loop itself needs of an engine is the smaller `model.engine.runs.Decoder`.

Options are arguments (`DecodeOptions`); an engine never changes its loaded model's weights or what a plain
run computes, so one engine can serve every session of a server (the Hugging Face adapter's head-off hooks are
put on once at load time and act only inside the calling thread's own ablated run: model.hf.ablation).
A new switch of a forward pass (say, head ablation, or recording contributions) is a new `DecodeOptions`
field: it reaches every forward pass, because `teacher_forced_batch` and `start_decoding` receive the options
whole.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import replace
from typing import Any

import numpy as np
import torch
from attention_lens.model.engine.audio_axis import AudioAxis
from attention_lens.model.engine.beam import beam_search
from attention_lens.model.engine.contributions import contributions
from attention_lens.model.engine.decode import decode_batch
from attention_lens.model.engine.device import CPU, device_name, dtype_name
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.heads import expand, keep_masks
from attention_lens.model.engine.lens import lens
from attention_lens.model.engine.runs import ContributionParts, DecodeOptions, Features, RawRun, Stepper
from attention_lens.model.engine.saliency import saliency
from attention_lens.model.engine.tensors import to_numpy
from attention_lens.model.engine.text import unknown_words_warning
from attention_lens.model.engine.to_trace import to_trace
from attention_lens.model.engine.trace import Trace


class Engine(ABC):
    """One loaded model. Subclasses set the attributes below and implement the abstract methods."""

    name: str
    family: str  # "builtin", or the Hugging Face model_type ("marian", "t5", ...)
    card: dict[str, Any]  # what the folder says about the model (pair, variant, metrics, trained setting)
    n_encoder_layers: int
    n_decoder_layers: int
    n_heads: int
    max_source_tokens: int
    max_target_tokens: int
    supports_causal_switch: bool = True
    supports_shift_switch: bool = True
    switch_notes: dict[str, str]  # "causal" / "shift": how the switch works on this model, or why it cannot
    bug_switches: frozenset[str] = frozenset()  # the bug switches (model.engine.bugs.BUGS) this family computes
    bug_notes: dict[str, str] = {}  # a bug switch -> why this family cannot compute it
    start_id: int  # the id decoder position 0 reads
    end_id: int  # the end-of-sentence id a target ends with
    eos_ids: frozenset[int]  # every id that ends a decoded sentence
    pad_id: int | None  # written after a row has ended; None: the model has no padding id
    device: torch.device = CPU  # where the weights live and every forward pass runs (model.engine.device)
    src_lang: str | None = None  # a multilingual model: the source language its tokenizer marks (with_languages)
    tgt_lang: str | None = None  # ... and the target language forced as the first generated token
    dtype: torch.dtype = torch.float32  # the weights' float type (float16 / bfloat16 on request)
    source_kind: str = "text"  # what the encoder reads: "text" (pieces) or "audio" (a clip: trace(audio=...))

    # ---- text ---------------------------------------------------------------------------------------------
    @abstractmethod
    def normalise(self, text: str) -> str:
        """Natural input -> the source text actually tokenised."""

    def normalise_target(self, text: str) -> str:
        """Natural input -> the target text actually tokenised (the source rule unless the family differs)."""
        return self.normalise(text)

    @abstractmethod
    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        """Normalised source text -> (ids fed to the encoder, their source pieces), special tokens included."""

    @abstractmethod
    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        """Target text -> label ids, ending with the end-of-sentence id; at most `max_target_tokens` of them
        unless truncate is False."""

    @abstractmethod
    def piece(self, token_id: int) -> str:
        """The target-vocabulary piece of an id (what the decoder reads and writes)."""

    @abstractmethod
    def source_piece(self, token_id: int) -> str:
        """The source-vocabulary piece of an id (what the encoder reads)."""

    @abstractmethod
    def piece_to_id(self, piece: str) -> int | None:
        """The target-vocabulary id of a piece, or None when the vocabulary has no such piece."""

    @abstractmethod
    def detokenize(self, ids: list[int]) -> str:
        """Target ids -> text, special tokens dropped."""

    @abstractmethod
    def special_ids(self) -> set[int]:
        """Ids that stand for no word (padding, start, end, language codes...)."""

    @abstractmethod
    def unknown_pieces(self) -> frozenset[str]:
        """The pieces of the unknown token, on both sides: they stand for (part of) a word, so never special."""

    def unknown_words(self, normalised: str) -> list[str]:
        """The words of a normalised source this model does not know, each once and in order, found before
        decoding (a family's own rule; see the subclasses). Default: the family cannot tell, so none."""
        return []

    def known_share(self, normalised: str) -> float:
        """The share of a normalised source's words that `unknown_words` does not name (1.0 for no words)."""
        words = normalised.split()
        if not words:
            return 1.0
        unknown = set(self.unknown_words(normalised))
        return sum(w not in unknown for w in words) / len(words)

    def word_note(self, word: str) -> str:
        """What a notice says about a word that `unknown_words` returned, beside the word ("" for nothing more;
        a model trained on typed text says how often training saw it and which pieces it became)."""
        return ""

    def source_word_counts(self) -> dict[str, int] | None:
        """How often each source word (case-folded) occurred in the model's training text, when the model ships
        those counts; None otherwise (the default)."""
        return None

    def lexicon(self) -> dict[str, list[tuple[str, ...]]]:
        """The source words this model knows by part of speech ("nouns", "verbs", ...), each entry the forms
        of one word (a verb's present, past, infinitive); {} for a model without a word list (a Hugging Face
        model, or one trained on your own data)."""
        return {}

    def special_pieces(self) -> frozenset[str]:
        """The pieces of the special ids, in both vocabularies."""
        ids = self.special_ids()
        return frozenset(self.piece(i) for i in ids) | frozenset(self.source_piece(i) for i in ids)

    # ---- forward passes (the family's own) ----------------------------------------------------------------
    @abstractmethod
    def teacher_forced_batch(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                             need_weights: bool = True) -> list[RawRun]:
        """Teacher forcing of each (source ids, label ids) pair in the setting of `options` (causal, shift,
        ablate): every row in one parallel pass, logits always, attention unless need_weights is False (then
        the attention arrays may be empty). With options.contributions a family may put each run's
        ContributionParts from the same pass in run.extra["parts"]. A family calls `check_options` first."""

    def cross_attention_batch(self, srcs: list[list[int]], labels: list[list[int]],
                              options: DecodeOptions) -> list[np.ndarray]:
        """The cross-attention alone, (L, h, m, n) float32, of each teacher-forced (source ids, label ids) pair in
        the setting of `options`: what reads attention only (word alignment over a corpus) asks for this, so a
        family may skip what it need not compute (ours: no logits, no self-attention weights). This default
        is teacher_forced_batch's cross_attn."""
        return [run.cross_attn for run in self.teacher_forced_batch(srcs, labels, options)]

    @abstractmethod
    def start_decoding(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool) -> Stepper:
        """Encode a batch of sources and return the Stepper that decodes them."""

    def contribution_parts(self, run: RawRun, options: DecodeOptions) -> ContributionParts:
        """Replay `run` (its source and the decoder inputs it read, in the setting of `options`, the same heads
        off) and return what contributions are computed from. A family that cannot says so."""
        raise ModelInputError(f"{self.name}: this {self.family} model cannot compute contributions")

    def head_masks(self, options: DecodeOptions) -> dict[str, torch.Tensor | None]:
        """The head masks of options.ablate for this model (None per kind with no head off), on its device."""
        masks = keep_masks(options.ablate, self.n_encoder_layers, self.n_decoder_layers, self.n_heads)
        return {k: None if m is None else m.to(self.device) for k, m in masks.items()}

    def head_off_nll(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                     heads: list[str]) -> np.ndarray:
        """(1 + len(heads),) the summed negative log-likelihood (nats) of the labels of (source ids, label ids)
        pairs under teacher forcing in the setting of `options`: first with no head off, then with each head of
        `heads` ("kind:layer:head", 1-based) alone off. This default runs one teacher_forced_batch per head; a
        family may do better (ours: many heads in one batched pass, a head mask per row: model.builtin.ablation)."""
        out = np.zeros(1 + len(heads))
        for k, spec in enumerate([None, *heads]):
            runs = self.teacher_forced_batch(srcs, labels, replace(options, ablate=() if spec is None else (spec,)),
                                             need_weights=False)
            for run in runs:
                logits = run.logits.astype(np.float64)
                top = logits.max(-1, keepdims=True)
                lse = (top + np.log(np.exp(logits - top).sum(-1, keepdims=True)))[:, 0]
                out[k] += float((lse - logits[np.arange(len(run.out_ids)), run.out_ids]).sum())
        return out

    def layer_logits(self, run: RawRun, options: DecodeOptions) -> torch.Tensor:
        """The logit lens (model.engine.lens): replay `run` in the setting of `options` (the same heads off) and
        return (L_dec, m, V), each decoder layer's output through the final norm and output projection as the
        model applies them to its last layer; the last row is the replay's own logits. A family that cannot
        says so."""
        raise ModelInputError(f"{self.name}: this {self.family} model cannot compute the logit lens")

    def embedded_run(self, run: RawRun, options: DecodeOptions, chosen: list[int]) -> EmbeddedRun:
        """Every row of `run` as a differentiable function of its token embeddings, ending at the logit of the
        row's id in `chosen` (model.engine.gradients; gradient saliency, model.engine.saliency). A family that
        cannot says so."""
        raise ModelInputError(f"{self.name}: this {self.family} model cannot compute gradient saliency")

    # ---- languages (multilingual models) ------------------------------------------------------------------
    def languages(self) -> tuple[str, ...]:
        """The language codes this model can be given as src_lang / tgt_lang (NLLB's `fra_Latn`, mBART-50's
        `fr_XX`, M2M-100's `fr`); () for a model that is not multilingual."""
        return ()

    def with_languages(self, src_lang: str | None, tgt_lang: str | None) -> Engine:
        """This model with the source and / or target language chosen (None: keep this engine's), sharing its
        weights; the loaded engine itself is unchanged. A family without language codes refuses any choice in one
        sentence that names it."""
        if src_lang is None and tgt_lang is None:
            return self
        raise ModelInputError(f"--src-lang / --tgt-lang: this {self.family} model is not multilingual (it has no "
                              f"language codes), so its languages cannot be chosen.")

    def for_options(self, options: DecodeOptions) -> Engine:
        """The engine that runs `options`: this one, or (options naming other languages) with_languages."""
        if options.src_lang in (None, self.src_lang) and options.tgt_lang in (None, self.tgt_lang):
            return self
        return self.with_languages(options.src_lang, options.tgt_lang)

    def _with_own_languages(self, options: DecodeOptions) -> DecodeOptions:
        """The options as a Trace records them: a multilingual model's languages written even when defaulted."""
        if options.src_lang == self.src_lang and options.tgt_lang == self.tgt_lang:
            return options
        return replace(options, src_lang=options.src_lang or self.src_lang, tgt_lang=options.tgt_lang or self.tgt_lang)

    # ---- decoding choices a family may refine -------------------------------------------------------------
    def forced_prefix(self, options: DecodeOptions) -> tuple[int, ...]:
        """Target ids taken, not chosen, at the first steps of free running."""
        return tuple(options.forced)

    def restrict(self, logits: torch.Tensor, free_step: int = 0) -> torch.Tensor:
        """Logits of a free choice with the ids the family never chooses made impossible (default: none);
        free_step: how many tokens were chosen freely before this one (0: the first after the forced prefix)."""
        return logits

    def decode_length(self, options: DecodeOptions, n: int) -> int:
        """Steps at the most for a source of n tokens: the option, else 2n + 10; never past the positions."""
        return min(options.max_len or 2 * n + 10, self.max_target_tokens)

    # ---- settings -----------------------------------------------------------------------------------------
    @property
    def trained_setting(self) -> tuple[bool, bool]:
        """(causal, shift) the model was trained with, from its card (both on unless it says otherwise)."""
        return bool(self.card.get("trained_causal", True)), bool(self.card.get("trained_shift", True))

    def check_switches(self, causal: bool, shift: bool) -> None:
        """Raise ModelInputError, with the engine's own reason, for a setting this model cannot run."""
        if not causal and not self.supports_causal_switch:
            raise ModelInputError(self.switch_notes.get("causal", f"{self.name}: the causal mask cannot be "
                                                                  f"switched off"))
        if not shift and not self.supports_shift_switch:
            raise ModelInputError(self.switch_notes.get("shift", f"{self.name}: the right shift cannot be "
                                                                 f"switched off"))

    def decoder_dims(self) -> dict[str, int]:
        """The decoder's sizes, for counting its work (model.analysis.kv_cache): d_model, d_attn (heads x d_k),
        d_ff, ff_matrices (2; 3 for a gated feed-forward) and vocab. A family that cannot tell says so."""
        raise ModelInputError(f"{self.name}: this {self.family} model does not report its decoder's sizes")

    def check_bugs(self, options: DecodeOptions) -> None:
        """Raise ModelInputError, with the family's reason, for a bug switch this family cannot compute; and for
        contributions of a run with a bug switch on (their replay would run the healthy computation)."""
        for name in options.bugs:
            if name not in self.bug_switches:
                raise ModelInputError(self.bug_notes.get(name, f"{self.name}: the {name} switch is not possible "
                                                               f"for this {self.family} model"))
        if options.bugs and options.contributions:
            raise ModelInputError("Contributions are not computed for a run with a bug switch on.")
        if options.bugs and (options.lens or options.saliency):  # their replays, too, run the healthy model
            raise ModelInputError("The logit lens and gradient saliency are not computed for a run with a bug "
                                  "switch on.")

    def check_options(self, options: DecodeOptions) -> None:
        """What a teacher-forced pass checks first: the causal / shift setting (check_switches) and the bug
        switches (check_bugs)."""
        self.check_switches(options.causal, options.shift)
        self.check_bugs(options)

    def model_info(self) -> dict[str, Any]:
        """The Trace's `model`: name, family, layer and head counts, and where it ran (device, dtype)."""
        return {"name": self.name, "family": self.family, "encoder_layers": self.n_encoder_layers,
                "decoder_layers": self.n_decoder_layers, "heads": self.n_heads, "device": device_name(self.device),
                "dtype": dtype_name(self.dtype)}

    # ---- runs in ids --------------------------------------------------------------------------------------
    def run_teacher_forced(self, src_ids: list[int], labels: list[int], causal: bool, shift: bool) -> RawRun:
        """One teacher-forced pass with attention."""
        options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
        return self.teacher_forced_batch([src_ids], [labels], options)[0]

    def decode_batch(self, srcs: list[list[int]], options: DecodeOptions, need_weights: bool = True) -> list[RawRun]:
        """Greedy or sampled decoding of a batch of sources (model.engine.decode)."""
        return decode_batch(self, srcs, options, need_weights)

    def run_generate(self, src_ids: list[int], options: DecodeOptions) -> RawRun:
        """Greedy or sampled decoding of one source."""
        return self.decode_batch([src_ids], options)[0]

    def run_beam(self, src_ids: list[int], options: DecodeOptions) -> tuple[list[RawRun], list[list[dict]]]:
        """Beam search (model.engine.beam): final hypotheses best first, and the live beams after each step
        as {"tokens": pieces, "score"}."""
        runs, steps = beam_search(self, src_ids, options)
        return runs, [[{"tokens": [self.piece(i) for i in b["tokens"]], "score": b["score"]} for b in s]
                      for s in steps]

    # ---- inputs -------------------------------------------------------------------------------------------
    def prepare_source(self, text: str) -> tuple[str, list[int], list[str], list[str]]:
        """Normalise and tokenise; returns (normalised text, ids, pieces, warnings). Words the model does not
        know are named in a warning; long input is truncated to the model's positions with a warning; empty
        input raises ModelInputError."""
        normalised = self.normalise(text)
        if not normalised.strip():
            raise ModelInputError("The source text is empty: type a sentence.")
        ids, pieces = self.encode_source(normalised)
        unknown = self.unknown_words(normalised)
        warnings = [unknown_words_warning(unknown, [self.word_note(w) for w in unknown])] if unknown else []
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

    # ---- audio (speech models) ----------------------------------------------------------------------------
    def spoken_languages(self) -> tuple[str, ...]:
        """A speech model's language codes (DecodeOptions.language, `--language`: Whisper's "en", "de", ...);
        () for a text model or an English-only speech model."""
        return ()

    def tasks(self) -> tuple[str, ...]:
        """A speech model's tasks (DecodeOptions.task, `--task`: "transcribe", "translate"); () where there is
        no choice."""
        return ()

    def audio_source(self, audio: Any, options: DecodeOptions | None = None
                     ) -> tuple[Features, AudioAxis, dict[str, Any], list[str]]:
        """A clip (a path, the bytes of a file, (samples, rate), or a model.audio.Audio; read by
        model.audio.read_audio) -> (the source that teacher_forced_batch, decode_batch and run_beam take, where the
        clip lies on the encoder's positions, the Trace's `source` object (AudioAxis.record), warnings). A speech
        family implements this; a text model refuses it, saying it reads text."""
        raise ModelInputError(f"{self.name} reads text, not audio: it is a {self.family} text model. Give it a "
                              f"sentence (--text), or open a speech model (e.g. a Whisper folder) for a clip.")

    def trace_audio(self, audio: Any, target: str | None = None, options: DecodeOptions | None = None) -> Trace:
        """One run of a speech model on a clip (see `trace`): greedy, sampled or beam decoding, or with a target
        one teacher-forced pass. The Trace's source axis is the clip's encoder positions and one padding band
        (model.engine.audio_axis); its `source` object holds the times and the clip's log-mel."""
        options = options or DecodeOptions()
        if options.contributions or options.lens or options.saliency:
            raise ModelInputError(f"Contributions, the logit lens and gradient saliency are not computed for a "
                                  f"speech model ({self.family}) yet: their replays read token ids.")
        if options.ablate:
            options = replace(options, ablate=expand(options.ablate, self.n_encoder_layers, self.n_decoder_layers,
                                                     self.n_heads))
        src, axis, record, warnings = self.audio_source(audio, options)
        options = replace(options, language=record.get("language"), task=record.get("task"))  # as the run used them
        if target is not None or options.mode == "teacher_forced":
            if target is None or not target.strip():
                raise ModelInputError("Teacher forcing needs a reference transcript.")
            options = replace(options, mode="teacher_forced")
            labels, target_warnings = self.prepare_target(target)
            labels = [*self.forced_prefix(options), *labels]  # the prefix is read and predicted as in decoding
            if len(labels) > self.max_target_tokens:  # the prefix too must fit the decoder's positions
                target_warnings = [f"The reference transcript with the forced prefix has {len(labels)} tokens; this "
                                   f"model reads at most {self.max_target_tokens}, so it was truncated."]
                labels = labels[: self.max_target_tokens - 1] + labels[-1:]
            run = self.teacher_forced_batch([src], [labels], options)[0]
            return self._on_axis(run, options, axis, record, warnings + target_warnings)
        if options.mode == "beam":
            runs, beam_steps = self.run_beam(src, options)
            beams = tuple(self._on_axis(r, options, axis, record, warnings) for r in runs)
            return replace(beams[0], beams=beams, beam_steps=tuple(tuple(s) for s in beam_steps))
        return self._on_axis(self.run_generate(src, options), options, axis, record, warnings)

    def _on_axis(self, run: RawRun, options: DecodeOptions, axis: AudioAxis, record: dict[str, Any],
                 warnings: list[str]) -> Trace:
        """A raw run over the encoder's whole window -> its Trace on the clip's axis (the padding collapsed)."""
        run = replace(run, src_ids=list(range(axis.n)), enc_attn=axis.collapse_encoder(run.enc_attn),
                      cross_attn=axis.collapse_keys(run.cross_attn))
        trace = to_trace(self, run, options, "", warnings)
        return replace(trace, source_tokens=tuple(axis.labels()), source=record,
                       forced_tokens=tuple(self.piece(i) for i in self.forced_prefix(options)))

    # ---- traces -------------------------------------------------------------------------------------------
    def trace(self, text: str | None = None, target: str | None = None, options: DecodeOptions | None = None, *,
              audio: Any = None) -> Trace:
        """One decoding run (or, with a target or mode="teacher_forced", one teacher-forced pass) of a text, or
        of a clip (audio=: a path, bytes, (samples, rate) or model.audio.Audio) for a speech model
        (`trace_audio`)."""
        if audio is not None:
            if text is not None:
                raise ModelInputError("Give a text or a clip (audio), not both.")
            return self.trace_audio(audio, target, options)
        if text is None:
            raise ModelInputError("Give a text to trace (or, for a speech model, a clip: audio=...).")
        options = options or DecodeOptions()
        if (engine := self.for_options(options)) is not self:  # other languages: the engine bound to them
            return engine.trace(text, target, options)
        options = self._with_own_languages(options)
        if options.ablate:  # explicit heads, checked against this model, as the Trace lists them
            options = replace(options, ablate=expand(options.ablate, self.n_encoder_layers, self.n_decoder_layers,
                                                     self.n_heads))
        normalised, src_ids, _, warnings = self.prepare_source(text)
        if target is not None or options.mode == "teacher_forced":
            if target is None or not target.strip():
                raise ModelInputError("Teacher forcing needs a reference target.")
            options = replace(options, mode="teacher_forced")
            labels, target_warnings = self.prepare_target(target)
            run = self.teacher_forced_batch([src_ids], [labels], options)[0]
            return self._to_trace(run, options, normalised, warnings + target_warnings)
        if options.mode == "beam":
            runs, beam_steps = self.run_beam(src_ids, options)
            beams = tuple(self._to_trace(r, options, normalised, warnings) for r in runs)
            return replace(beams[0], beams=beams, beam_steps=tuple(tuple(s) for s in beam_steps))
        run = self.run_generate(src_ids, options)
        return self._to_trace(run, options, normalised, warnings)

    def trace_batch(self, texts: list[str], targets: list[str | None],
                    options: DecodeOptions | None = None) -> list[Trace | ModelInputError]:
        """`trace` of many inputs, teacher forcing and greedy/sampled decoding run as batches (beam one by
        one): a Trace per input, or the ModelInputError that input raised, in order."""
        options = options or DecodeOptions()
        if (engine := self.for_options(options)) is not self:  # other languages: the engine bound to them
            return engine.trace_batch(texts, targets, options)
        options = self._with_own_languages(options)
        out: list[Trace | ModelInputError | None] = [None] * len(texts)
        forced, decoded = [], []
        for k, (text, target) in enumerate(zip(texts, targets)):
            try:
                # One by one: ablation; beam; and the swapped cross-attention, which fails on a line whose
                # lengths differ (a batch would fail all its lines with it).
                alone = options.mode in ("beam", "teacher_forced") and target is None
                if options.ablate or options.swap_cross or alone:
                    out[k] = self.trace(text, target, options)
                    continue
                normalised, src_ids, _, warnings = self.prepare_source(text)
                if target is None:
                    decoded.append((k, normalised, src_ids, None, warnings))
                else:
                    labels, target_warnings = self.prepare_target(target)
                    forced.append((k, normalised, src_ids, labels, warnings + target_warnings))
            except ModelInputError as exc:
                out[k] = exc
        if forced:
            tf = replace(options, mode="teacher_forced")
            runs = self.teacher_forced_batch([f[2] for f in forced], [f[3] for f in forced], tf)
            for (k, normalised, _, _, warnings), run in zip(forced, runs):
                out[k] = self._to_trace(run, tf, normalised, warnings)
        for n in sorted({len(d[2]) for d in decoded}):  # one batch per source length: a batch decodes as far
            same = [d for d in decoded if len(d[2]) == n]  # as its longest source allows (decode_length)
            for (k, normalised, _, _, warnings), run in zip(same, self.decode_batch([d[2] for d in same], options)):
                out[k] = self._to_trace(run, options, normalised, warnings)
        return out

    def _to_trace(self, run: RawRun, options: DecodeOptions, normalised: str, warnings: list[str]) -> Trace:
        extra = None
        if options.contributions:  # a teacher-forced pass may have returned its parts; else one replay
            extra = contributions(run, run.extra.get("parts") or self.contribution_parts(run, options))
        return to_trace(self, run, options, normalised, warnings, extra, self._why(run, options))

    def _why(self, run: RawRun, options: DecodeOptions) -> dict[str, Any]:
        """The lens and saliency objects the options ask for (none by default), for the row's chosen token:
        decoding's choice, or in teacher forcing the model's top prediction (the token its Step names)."""
        why: dict[str, Any] = {}
        if not (options.lens or options.saliency):
            return why
        teacher = options.mode == "teacher_forced"
        chosen = [int(i) for i in run.logits.argmax(-1)] if teacher else list(run.out_ids)
        if options.lens:
            why["lens"] = lens(to_numpy(self.layer_logits(run, options)), chosen, self.piece, options.report_top_k)
        if options.saliency:
            why["saliency"] = saliency(self.embedded_run(run, options, chosen), run.cross_attn)
        return why
