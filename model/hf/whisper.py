"""Whisper (WhisperForConditionalGeneration: openai/whisper-*, distil-whisper, fine-tunes) through the Hugging Face
adapter: a speech model whose source is a clip.

The clip is read by model.audio.read_audio (16 kHz mono, at most the model's window), turned into log-mel by the
folder's own feature extractor (padded to the window, 30 s: 3,000 frames of 10 ms), and encoded once; the
decoder runs in the one decoding loop of model.engine with the model's key-value cache, as every family does. The
run's forced prefix is Whisper's: the decoder reads <|startoftranscript|> first (the start id), then is given the
language, the task and <|notimestamps|> (`forced_prefix`), exactly the tokens `generate(language=, task=)` puts
there; the tokens generate suppresses (generation_config.suppress_tokens, and begin_suppress_tokens at the first
free choice) are suppressed here too, so a greedy run chooses what `generate` chooses.

Attention comes back over the whole window (1,500 encoder positions); the Trace keeps the clip's positions and one
padding band (model.engine.audio_axis, Engine.trace_audio). The causal and shift switches work as for the text
families (a 4-D decoder mask passed in, found to be honoured by the structure probe); heads can be switched off
(the output-projection hooks of model.hf.ablation). Contributions, the logit lens and gradient saliency replay a
run from token ids, so they are refused for Whisper, naming it.
"""

from __future__ import annotations

from typing import Any

import torch
from attention_lens.model.engine.audio_axis import AudioAxis
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.errors import CheckpointError, ModelInputError
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.options import TASKS
from attention_lens.model.engine.runs import ContributionParts, DecodeOptions, Features, RawRun, Stepper
from attention_lens.model.engine.text import MAX_INPUT_CHARS, clean
from attention_lens.model.hf.ablation import ablating
from attention_lens.model.hf.engine import HFEngine, HFStepper


class WhisperStepper(HFStepper):
    """The model's own cache over one encoded batch of clips (their features stacked; Whisper takes no mask)."""

    def __init__(self, model: Any, srcs: list[Features], need_weights: bool,
                 keep: dict[str, torch.Tensor | None] | None = None) -> None:
        self.model, self.need_weights, self.head_keep = model, need_weights, keep
        self.device = model.device
        features = torch.stack([s.features for s in srcs]).to(self.device, model.dtype)  # (B, n_mels, frames)
        with ablating(model, keep):
            self.enc = model.get_encoder()(input_features=features, output_attentions=need_weights)
        self.enc_attentions = list(self.enc.attentions or [])
        self.keep = torch.ones(len(srcs), self.enc.last_hidden_state.shape[1], dtype=torch.long, device=self.device)
        self.cache = None


class WhisperEngine(HFEngine):
    """A Whisper checkpoint: HFEngine's decoder side, a clip as its source (`source_kind = "audio"`)."""

    source_kind = "audio"

    def __init__(self, model: Any, tokenizer: Any, name: str, card: dict[str, Any], extractor: Any) -> None:
        self.extractor = extractor
        config = model.config
        self.n_positions = int(config.max_source_positions)  # encoder positions of the window (1,500)
        frames = int(getattr(extractor, "nb_max_frames", 0) or 0)
        if frames != 2 * self.n_positions:  # the encoder's two convolutions halve the frames (stride 1, then 2)
            raise CheckpointError(f"{name}: the feature extractor makes {frames} log-mel frames per window but the "
                                  f"encoder reads {2 * self.n_positions} ({self.n_positions} positions): they do "
                                  f"not belong together")
        if int(extractor.feature_size) != int(config.num_mel_bins):
            raise CheckpointError(f"{name}: the feature extractor makes {extractor.feature_size} mel bins but the "
                                  f"model reads {config.num_mel_bins}")
        self.rate = int(extractor.sampling_rate)
        self.hop_s = int(extractor.hop_length) / self.rate  # one log-mel frame (10 ms)
        self.frame_s = 2 * self.hop_s  # one encoder position (20 ms)
        super().__init__(model, tokenizer, name, card)
        self.max_target_tokens = int(config.max_target_positions)
        self.max_source_tokens = self.n_positions
        gen = model.generation_config
        self.lang_to_id = {str(k).strip("<|>"): int(v) for k, v in (getattr(gen, "lang_to_id", None) or {}).items()}
        self.task_to_id = {str(k): int(v) for k, v in (getattr(gen, "task_to_id", None) or {}).items()}
        self.no_timestamps_id = getattr(gen, "no_timestamps_token_id", None)
        self.suppress = sorted(set(gen.suppress_tokens or []))
        self.begin_suppress = sorted(set(gen.begin_suppress_tokens or []))
        self.default_language = self._code(getattr(gen, "language", None)) if self.lang_to_id else None
        self.card["window_s"] = round(self.n_positions * self.frame_s, 6)

    def probe_features(self) -> torch.Tensor:
        """A window of silence's log-mel: the structure probe runs the encoder on it once."""
        return torch.zeros(1, int(self.model.config.num_mel_bins), 2 * self.n_positions)

    @property
    def window_s(self) -> float:
        return self.n_positions * self.frame_s

    # ---- languages and task: the forced prefix ----------------------------------------------------------------
    def spoken_languages(self) -> tuple[str, ...]:
        return tuple(self.lang_to_id)

    def tasks(self) -> tuple[str, ...]:
        return tuple(t for t in TASKS if t in self.task_to_id)

    def _code(self, language: str | None) -> str | None:
        """A language as given ("en", "<|en|>", "english") -> its code in this model, or ModelInputError."""
        if language is None:
            return None
        from transformers.models.whisper.tokenization_whisper import TO_LANGUAGE_CODE

        code = language.strip().lower().strip("<|>")
        code = TO_LANGUAGE_CODE.get(code, code)
        if code not in self.lang_to_id:
            raise ModelInputError(f"--language {language!r} is not a language of this whisper model "
                                  f"({len(self.lang_to_id)} codes, e.g. {', '.join(list(self.lang_to_id)[:4])}).")
        return code

    def run_language(self, options: DecodeOptions) -> tuple[str | None, str | None]:
        """The (language, task) a run uses: the options', else the generation config's, else English and
        transcribe (Whisper's own language detection is not run). An English-only model has neither and refuses
        both."""
        if not self.lang_to_id:
            if options.language not in (None, "en", "english") or options.task == "translate":
                raise ModelInputError(f"{self.name} is an English-only whisper model: it takes no --language or "
                                      f"--task (its prefix is <|startoftranscript|><|notimestamps|>).")
            return None, None
        language = self._code(options.language) or self.default_language or "en"
        task = options.task or getattr(self.model.generation_config, "task", None) or "transcribe"
        if task not in self.task_to_id:
            raise ModelInputError(f"--task {task!r}: this whisper model's tasks are {', '.join(self.tasks())}.")
        return language, task

    def forced_prefix(self, options: DecodeOptions) -> tuple[int, ...]:
        """The user's forced tokens when given (they continue a run's own ids, prefix included); else Whisper's:
        the language, the task and <|notimestamps|> (what generate(language=, task=) forces after the start)."""
        if options.forced:
            return tuple(options.forced)
        language, task = self.run_language(options)
        prefix = []
        if language is not None:
            prefix += [self.lang_to_id[language], self.task_to_id[task]]
        if self.no_timestamps_id is not None:
            prefix.append(int(self.no_timestamps_id))
        return tuple(prefix)

    def restrict(self, logits: torch.Tensor, free_step: int = 0) -> torch.Tensor:
        """What generate suppresses: suppress_tokens always, begin_suppress_tokens at the first free choice."""
        ids = self.suppress + (self.begin_suppress if free_step == 0 else [])
        ids = [i for i in ids if 0 <= i < logits.shape[-1]]
        if not ids:
            return logits
        return logits.index_fill(-1, torch.tensor(ids, device=logits.device), float("-inf"))

    def decode_length(self, options: DecodeOptions, n: int) -> int:
        """The option, else as far as the decoder's positions go (generate's max_length)."""
        return min(options.max_len or self.max_target_tokens, self.max_target_tokens)

    # ---- the source side: a clip, never text ------------------------------------------------------------------
    def _text_refused(self) -> ModelInputError:
        return ModelInputError(f"{self.name} is a speech model (whisper): its source is a clip, not text. Give it "
                               f"audio (--audio CLIP, or trace(audio=...)); a text goes in only as the reference "
                               f"transcript (--target).")

    def normalise(self, text: str) -> str:
        raise self._text_refused()

    def normalise_target(self, text: str) -> str:
        return clean(text, MAX_INPUT_CHARS)

    def encode_source(self, text: str) -> tuple[list[int], list[str]]:
        raise self._text_refused()

    def source_piece(self, token_id: int) -> str:
        """An encoder position's start time (the Trace's labels: model.engine.audio_axis.AudioAxis.labels)."""
        return f"{int(token_id) * self.frame_s:.2f} s"

    def unknown_pieces(self) -> frozenset[str]:
        """None: byte-level BPE spells every word (its unk_token is <|endoftext|>, a special token)."""
        return frozenset()

    def unknown_words(self, normalised: str) -> list[str]:
        return []

    def encode_target(self, text: str, truncate: bool = True) -> list[int]:
        """The transcript's ids as Whisper writes them (a leading space, as its decoded words begin), then
        <|endoftext|>; the forced prefix is not included (Engine.trace_audio puts it in front)."""
        ids = [int(i) for i in self.tokenizer(" " + text.strip(), add_special_tokens=False)["input_ids"]]
        room = self.max_target_tokens - 4  # the longest forced prefix: language, task, <|notimestamps|>
        if truncate:
            ids = ids[: room - 1]
        return [*ids, self.end_id]

    def audio_source(self, audio: Any, options: DecodeOptions | None = None
                     ) -> tuple[Features, AudioAxis, dict[str, Any], list[str]]:
        """The clip read (model.audio.read_audio, at most the window), its log-mel over the window padded with
        silence as the feature extractor pads it, and its place on the encoder's positions."""
        from attention_lens.model.audio import read_audio

        options = options or DecodeOptions()
        language, task = self.run_language(options)
        clip = read_audio(audio, max_seconds=self.window_s)
        mel = self.extractor(clip.samples, sampling_rate=clip.rate, return_tensors="pt")["input_features"][0]
        axis = AudioAxis.of_clip(clip.duration_s, self.n_positions, self.frame_s)
        hop = int(self.extractor.hop_length)
        clip_frames = min(mel.shape[-1], max(1, -(-len(clip.samples) // hop)))  # frames starting inside the clip
        record = axis.record(mel[:, :clip_frames].numpy(), clip.duration_s, clip.rate, language, task)
        warnings = []
        if clip.original_rate != clip.rate:
            warnings.append(f"{clip.name}: resampled from {clip.original_rate} Hz to {clip.rate} Hz")
        if clip.channels > 1:
            warnings.append(f"{clip.name}: {clip.channels} channels mixed down to one")
        return Features(mel, self.n_positions), axis, record, warnings

    def source_batch(self, srcs: list[Any]) -> tuple[torch.Tensor, torch.Tensor | None]:
        if not all(isinstance(s, Features) for s in srcs):
            raise self._text_refused()
        return torch.stack([s.features for s in srcs]), None

    # ---- forward passes ---------------------------------------------------------------------------------------
    def check_options(self, options: DecodeOptions) -> None:
        super().check_options(options)
        if options.contributions:
            raise self._replay_refused("contributions")

    def _replay_refused(self, what: str) -> ModelInputError:
        return ModelInputError(f"{self.name}: {what} are not computed for whisper models (their replay reads token "
                               f"ids, a speech model's source is a clip).")

    def start_decoding(self, srcs: list[Any], options: DecodeOptions, need_weights: bool) -> Stepper:
        self.check_bugs(options)
        if not all(isinstance(s, Features) for s in srcs):
            raise self._text_refused()
        return WhisperStepper(self.model, srcs, need_weights, self.head_masks(options))

    def head_off_nll(self, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions,
                     heads: list[str]) -> Any:
        """One teacher-forced batch per head (the contract's default): the batched form pads token ids."""
        return Engine.head_off_nll(self, srcs, labels, options, heads)

    def contribution_parts(self, run: RawRun, options: DecodeOptions) -> ContributionParts:
        raise self._replay_refused("contributions")

    def layer_logits(self, run: RawRun, options: DecodeOptions) -> torch.Tensor:
        raise self._replay_refused("the logit lens' layers")

    def embedded_run(self, run: RawRun, options: DecodeOptions, chosen: list[int]) -> EmbeddedRun:
        raise self._replay_refused("gradient saliency scores")
