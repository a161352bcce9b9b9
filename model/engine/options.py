"""A run's options, in the one form they keep from the page or the command line to the engine and back in the
Trace: `DecodeOptions`, frozen and hashable (a cache key as it is: app.services.get_trace). On disk a Trace
writes them as the flat `options` object of docs/formats.md (`to_record` / `from_record`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any

from attention_lens.model.engine.bugs import BUGS
from attention_lens.model.engine.heads import check_spec

MODES = ("greedy", "beam", "sample", "teacher_forced")
# Written only when set, so a plain run's options read as they always did. `contributions` is never written:
# a Trace holds its contributions object exactly when the run asked for it.
WRITTEN_WHEN_SET = ("lens", "saliency", *BUGS, "src_lang", "tgt_lang", "language", "task")
TASKS = ("transcribe", "translate")  # a speech model's task token (Whisper's <|transcribe|> / <|translate|>)
# What a Trace's `options` object holds beside the options themselves: what the run found (Trace fields).
RUN_KEYS = ("forced", "normalised_source", "warnings", "score")


@dataclass(frozen=True)
class DecodeOptions:
    mode: str = "greedy"  # greedy | beam | sample | teacher_forced
    causal: bool = True  # teacher forcing only (see causal_mask)
    shift: bool = True  # teacher forcing only: free-running decoding always reads the previous token
    beam_size: int = 4
    temperature: float = 1.0
    top_k: int = 0  # sampling: keep the k most likely tokens (0 = all)
    seed: int = 0
    max_len: int | None = None  # None: the engine's default for the source length
    forced: tuple[int, ...] = ()  # free running: target ids chosen for the first steps, then continue
    report_top_k: int = 5
    lens: bool = False  # add the logit lens of every decoder row to the Trace (model.engine.lens)
    saliency: bool = False  # add every row's gradient saliency to the Trace (model.engine.saliency)
    ablate: tuple[str, ...] = ()  # heads switched off, "KIND:LAYER:HEAD" (1-based, * = all; model.engine.heads)
    contributions: bool = False  # add the contributions object to the Trace (model.engine.contributions)
    # Three more silent bugs of the references, each off by default (model.engine.bugs; engines that cannot
    # express one refuse it with a reason, Engine.bug_notes):
    mask_after_softmax: bool = False  # zero the masked weights after the softmax (rows not renormalised)
    swap_cross: bool = False  # cross-attention called as (memory, x, x) instead of (x, memory, memory)
    unscaled: bool = False  # scores not divided by sqrt(d_k)
    # Multilingual models (NLLB, M2M-100, mBART-50): the language codes of the source (the tokenizer marks it) and
    # of the target (forced as the first generated token); None: the model's own default. Engine.with_languages.
    src_lang: str | None = None
    tgt_lang: str | None = None
    # Speech models (Whisper): the spoken language (a code such as "en", forced after <|startoftranscript|>) and
    # the task ("transcribe" or "translate"); None: the model's own default. Both become the run's forced prefix.
    language: str | None = None
    task: str | None = None

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
        for spec in self.ablate:
            check_spec(spec)
        if self.task is not None and self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")

    @property
    def bugs(self) -> tuple[str, ...]:
        """The names of the bug switches that are on (model.engine.bugs.BUGS), in a fixed order."""
        return tuple(name for name in BUGS if getattr(self, name))

    @property
    def causal_mask(self) -> bool:
        """Whether the decoder's self-attention is masked to the past. The causal switch only matters in teacher
        forcing: free-running decoding (greedy, beam, sample) cannot see the future anyway, it is not made yet."""
        return self.causal or self.mode != "teacher_forced"

    def to_record(self, forced_tokens: tuple[str, ...], normalised_source: str, warnings: tuple[str, ...],
                  score: float) -> dict[str, Any]:
        """The Trace's `options` object (docs/formats.md): these options, the forced prefix as pieces, and what
        the run found (its normalised source, warnings and score)."""
        record = {k: v for k, v in asdict(self).items() if k not in ("forced", "ablate", "contributions")}
        for name in WRITTEN_WHEN_SET:
            if not record[name]:
                del record[name]
        if self.ablate:
            record["ablate"] = list(self.ablate)
        return record | {"forced": list(forced_tokens), "normalised_source": normalised_source,
                         "warnings": list(warnings), "score": score}

    @classmethod
    def from_record(cls, record: dict[str, Any], contributions: bool = False) -> DecodeOptions:
        """The options of a Trace's `options` object (`to_record`'s keys; RUN_KEYS are the Trace's, not read
        here). A file holds the forced prefix as pieces only, so `forced` is () (Trace.forced_tokens has them).
        Raises ValueError for an unknown key or a value of the wrong type."""
        if not isinstance(record, dict):
            raise ValueError("options must be a JSON object")
        known = {f.name: f for f in fields(cls)}
        unknown = sorted(set(record) - set(known) - set(RUN_KEYS))
        if unknown:
            raise ValueError(f"unknown options {unknown}")
        values: dict[str, Any] = {"contributions": contributions}
        for name, value in record.items():
            if name in RUN_KEYS or name == "contributions":
                continue
            if name == "ablate":
                if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
                    raise ValueError("options.ablate must be a list of strings")
                value = tuple(value)
            elif name in ("src_lang", "tgt_lang", "language", "task"):
                if value is not None and not isinstance(value, str):
                    raise ValueError(f"options.{name} must be a language code (a string)")
            elif not _of_type(value, known[name].default, name == "max_len"):
                raise ValueError(f"options.{name}: {value!r} is not of its type")
            values[name] = value
        return cls(**values)


def _of_type(value: Any, default: Any, nullable: bool) -> bool:
    """Whether a value read from JSON has the type of an option's default (an int for a float, null where
    the option may be None)."""
    if value is None:
        return nullable
    if isinstance(default, (bool, str)) or nullable:
        return type(value) is (int if nullable else type(default))
    return not isinstance(value, bool) and isinstance(value, int if isinstance(default, int) else (int, float))
