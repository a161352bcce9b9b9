"""The Trace: everything one decoding run computed, the only thing that crosses from models to the rest.

Schema: docs/formats.md. Attention arrays are float32, shaped (layers, heads, queries, keys).
JSON and NPZ writers and readers round-trip; readers validate shapes against tokens and say what is wrong.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from attention_lens.model.engine.audio_axis import check_source, read_source
from attention_lens.model.engine.lens import check as check_lens
from attention_lens.model.engine.options import DecodeOptions
from attention_lens.model.engine.saliency import check as check_saliency

VERSION = 1
KINDS = ("encoder_self_attention", "decoder_self_attention", "cross_attention")
CONTRIBUTION_GROUPS = ("norm_weighted", "rollout")


@dataclass(frozen=True)
class Step:
    """One decoder row: the token chosen (or, in teacher forcing, the model's top prediction)."""

    token: str
    id: int
    prob: float
    top_k: tuple[tuple[str, float], ...]
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. target_prob in teacher forcing

    def to_dict(self) -> dict[str, Any]:
        d = {"token": self.token, "id": int(self.id), "prob": float(self.prob),
             "top_k": [{"token": t, "prob": float(p)} for t, p in self.top_k]}
        d.update(self.extra)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Step:
        extra = {k: v for k, v in d.items() if k not in ("token", "id", "prob", "top_k")}
        return cls(str(d["token"]), int(d["id"]), number(d["prob"]),
                   tuple((str(t["token"]), number(t["prob"])) for t in d["top_k"]), extra)


def strings(value: Any) -> tuple[str, ...]:
    """A list of strings read from JSON, as a tuple."""
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("expected a list of strings")
    return tuple(value)


def number(value: Any) -> float:
    """A probability read from JSON: null (how a NaN is written, Trace.to_json) back to NaN."""
    return math.nan if value is None else float(value)


def finite_or_null(value: Any) -> Any:
    """value (JSON-ready dicts, lists, numbers) with every NaN / infinite float replaced by None."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: finite_or_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite_or_null(v) for v in value]
    return value


def strict_json(value: Any) -> str:
    """json.dumps without NaN / Infinity (written as null); the walk that replaces them runs only when needed."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except ValueError:
        return json.dumps(finite_or_null(value), ensure_ascii=False, allow_nan=False)


@dataclass(frozen=True)
class Trace:
    """One run: the schema of docs/formats.md, plus optional keys present only when the run asked for them.

    - `contributions`: {"method", "norm_weighted": {kind: array}, "rollout": {kind: array}, "source_share": (m,)}
      (DecodeOptions.contributions, `trace --contributions`; model.engine.contributions).
    - `lens` (DecodeOptions.lens, `trace --lens`; model.engine.lens): {"k", "layers": L, "top_k": per row per
      layer [{"token", "prob"}] * k, "chosen_prob": per row per layer, "chosen_rank": per row per layer (1 = top),
      "first_top_layer": per row the first layer (1-based) from which the chosen token stays top-1, or null}.
    - `saliency` (DecodeOptions.saliency, `trace --saliency`; model.engine.saliency): {"method", "baseline",
      "tolerance", "steps": per row {"source": IG per source token, "prefix": IG per decoder input the row could
      see, "source_input_x_gradient", "prefix_input_x_gradient", "intervals", "logit", "baseline_logit",
      "completeness_error", "spearman": per cross-attention layer per head, rho or null}}.
    - `source`: what the source axis is when it is not text; None for text. A speech model's run: {"kind": "audio",
      "rate", "duration_s", "window_s", "frame_s", "times": the start in seconds of each source position,
      "padding": {"index", "start_s", "end_s", "frames"} or None, "mel": (n_mels, clip frames) float32 array,
      "mel_hop_s", "language", "task"} (model.engine.audio_axis: the padding band and how it is collapsed).
    """

    model: dict[str, Any]
    options: DecodeOptions  # what the run was asked for (on disk: the `options` object, with the four below)
    source_tokens: tuple[str, ...]
    decoder_input_tokens: tuple[str, ...]
    target_tokens: tuple[str, ...]
    encoder_self_attention: np.ndarray  # (L_enc, h, n, n)
    decoder_self_attention: np.ndarray  # (L_dec, h, m, m)
    cross_attention: np.ndarray  # (L_dec, h, m, n)
    steps: tuple[Step, ...]
    beams: tuple[Trace, ...] = ()  # beam mode: every final hypothesis, best first, each with its attention
    beam_steps: tuple[tuple[dict[str, Any], ...], ...] = ()  # beam mode: the live beams after each step
    # Optional (asked for): {"method", "norm_weighted": {kind: array}, "rollout": {kind: array},
    # "source_share": (m,)}, arrays shaped as the attention of the same kind (model.engine.contributions).
    contributions: dict[str, Any] | None = None
    # Optional (asked for: DecodeOptions.lens / .saliency, `trace --lens` / `--saliency`), JSON-ready objects:
    # `lens` per decoder row and layer the top-k tokens of the logit lens, the chosen token's probability and
    # rank, the first layer from which it stays top-1 (model.engine.lens); `saliency` per decoder row the
    # integrated gradients and input x gradient over the source and target prefix, their completeness and the
    # Spearman correlation with every cross-attention head (model.engine.saliency). Both docstrings give the keys.
    lens: dict[str, Any] | None = None
    saliency: dict[str, Any] | None = None
    # The source axis when it is not text (None: text pieces): a speech model's clip, its positions' times, the
    # padding band and the clip's log-mel (model.engine.audio_axis.AudioAxis.record; docs/formats.md).
    source: dict[str, Any] | None = None
    # What the run found, written inside the `options` object on disk (docs/formats.md):
    forced_tokens: tuple[str, ...] = ()  # options.forced as pieces (a file holds only these: options.forced ())
    normalised_source: str = ""  # the source text actually tokenised
    warnings: tuple[str, ...] = ()  # unknown words, truncation
    score: float = 0.0  # the run's log-probability (beam search's ranking)
    version: int = VERSION

    def __post_init__(self) -> None:
        validate(self)
        # A server caches one Trace per input and shares it between sessions (app.services.get_trace): its arrays
        # are read-only, so that no page can change what another one shows (frozen=True alone is shallow).
        for a in self.arrays():
            a.flags.writeable = False

    def arrays(self) -> list[np.ndarray]:
        """Every numpy array the Trace holds: the attention of each kind, and the contributions' arrays."""
        out = [getattr(self, kind) for kind in KINDS]
        if self.contributions is not None:
            out += [self.contributions[g][k] for g in CONTRIBUTION_GROUPS for k in KINDS]
            out.append(self.contributions["source_share"])
        if self.source is not None:
            out.append(self.source.get("mel"))
        return [a for a in out if isinstance(a, np.ndarray)]

    @property
    def n(self) -> int:
        return len(self.source_tokens)

    @property
    def m(self) -> int:
        return len(self.target_tokens)

    def decoder_mask(self) -> np.ndarray:
        """(m, m) bool, True where a decoder query was allowed to attend a key (what the mask allowed,
        as opposed to a weight that merely came out as zero)."""
        m = self.m
        if self.options.causal_mask:
            return np.tril(np.ones((m, m), dtype=bool))
        return np.ones((m, m), dtype=bool)

    # ---- JSON -------------------------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": self.version, "model": self.model,
            "options": self.options.to_record(self.forced_tokens, self.normalised_source, self.warnings, self.score),
            "source_tokens": list(self.source_tokens),
            "decoder_input_tokens": list(self.decoder_input_tokens),
            "target_tokens": list(self.target_tokens),
        }
        for kind in KINDS:
            d[kind] = getattr(self, kind).tolist()
        d["steps"] = [s.to_dict() for s in self.steps]
        if self.beams:
            d["beams"] = [b.to_dict() for b in self.beams]
            d["beam_steps"] = [list(s) for s in self.beam_steps]
        if self.contributions is not None:
            c = self.contributions
            d["contributions"] = {"method": c["method"],
                                  **{g: {k: c[g][k].tolist() for k in KINDS} for g in CONTRIBUTION_GROUPS},
                                  "source_share": c["source_share"].tolist()}
        for key in ("lens", "saliency"):
            if getattr(self, key) is not None:
                d[key] = getattr(self, key)
        if self.source is not None:
            d["source"] = {k: v.tolist() if isinstance(v, np.ndarray) else v for k, v in self.source.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trace:
        if not isinstance(d, dict):
            raise ValueError("trace: expected a JSON object")
        missing = [k for k in ("model", "options", "source_tokens", "decoder_input_tokens", "target_tokens",
                               *KINDS, "steps") if k not in d]
        if missing:
            raise ValueError(f"trace: missing keys {missing}")
        if d.get("version", VERSION) != VERSION:
            raise ValueError(f"trace: unsupported version {d.get('version')!r} (this reader knows {VERSION})")
        try:
            arrays = {k: np.asarray(d[k], dtype=np.float32) for k in KINDS}
            record = d["options"]
            options = DecodeOptions.from_record(record, contributions=d.get("contributions") is not None)
            return cls(model=dict(d["model"]), options=options, forced_tokens=strings(record.get("forced", [])),
                       normalised_source=str(record.get("normalised_source", "")),
                       warnings=strings(record.get("warnings", [])), score=number(record.get("score", 0.0)),
                       source_tokens=tuple(str(t) for t in d["source_tokens"]),
                       decoder_input_tokens=tuple(str(t) for t in d["decoder_input_tokens"]),
                       target_tokens=tuple(str(t) for t in d["target_tokens"]),
                       steps=tuple(Step.from_dict(s) for s in d["steps"]),
                       beams=tuple(cls.from_dict(b) for b in d.get("beams", [])),
                       beam_steps=tuple(tuple(s) for s in d.get("beam_steps", [])),
                       contributions=read_contributions(d.get("contributions")), lens=d.get("lens"),
                       saliency=d.get("saliency"), source=read_source(d.get("source")), **arrays)
        except (TypeError, KeyError, ValueError, AttributeError, OverflowError, RecursionError) as exc:
            raise ValueError(f"trace: malformed ({type(exc).__name__}: {exc})") from exc

    def to_json(self) -> str:
        """The Trace as strict JSON (RFC 8259 has no NaN or Infinity). A model with NaN or infinite weights computes
        NaN attention and probabilities, which Python's json would write as the bare words NaN / Infinity: not
        JSON, refused by strict readers (JavaScript's JSON.parse, jq, json.loads with parse_constant). They are
        written as null, the one JSON value for "no number"; the readers here turn null back into NaN."""
        return strict_json(self.to_dict())

    # ---- NPZ: arrays as arrays, everything else as one JSON string -----------------------------------------
    def to_npz_dict(self) -> dict[str, np.ndarray]:
        meta = self.to_dict()
        for kind in KINDS:
            meta.pop(kind)
        out = {kind: getattr(self, kind) for kind in KINDS}
        for i, b in enumerate(self.beams):
            for kind in KINDS:
                out[f"beam{i}_{kind}"] = getattr(b, kind)
            for kind in KINDS:
                meta["beams"][i].pop(kind)
        if self.contributions is not None:
            meta["contributions"] = {"method": self.contributions["method"]}
            for g in CONTRIBUTION_GROUPS:
                for kind in KINDS:
                    out[f"contributions_{g}_{kind}"] = self.contributions[g][kind]
            out["contributions_source_share"] = self.contributions["source_share"]
        if self.source is not None and "mel" in self.source:
            meta["source"].pop("mel")
            out["source_mel"] = self.source["mel"]
        out["meta"] = np.array(strict_json(meta))
        return out

    @classmethod
    def from_npz_dict(cls, z: Any) -> Trace:
        try:
            meta = json.loads(str(z["meta"]))
            if not isinstance(meta, dict):
                raise ValueError("meta must be a JSON object")
            for kind in KINDS:
                meta[kind] = z[kind]
            for i, b in enumerate(meta.get("beams", [])):
                for kind in KINDS:
                    b[kind] = z[f"beam{i}_{kind}"]
            if "contributions" in meta:
                for g in CONTRIBUTION_GROUPS:
                    meta["contributions"][g] = {kind: z[f"contributions_{g}_{kind}"] for kind in KINDS}
                meta["contributions"]["source_share"] = z["contributions_source_share"]
            if isinstance(meta.get("source"), dict) and "source_mel" in z:
                meta["source"]["mel"] = z["source_mel"]
        except (KeyError, ValueError, TypeError, AttributeError, RecursionError) as exc:
            raise ValueError(f"trace: malformed NPZ ({exc})") from exc
        return cls.from_dict(meta)

    def save(self, path: Path) -> None:
        path = Path(path)
        if path.suffix == ".json":
            path.write_text(self.to_json(), encoding="utf-8")
        elif path.suffix == ".npz":
            np.savez_compressed(path, **self.to_npz_dict())
        else:
            raise ValueError(f"{path}: a trace is written as .json or .npz")

    @classmethod
    def load(cls, path: Path) -> Trace:
        path = Path(path)
        if path.suffix == ".json":
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
                raise ValueError(f"{path}: not valid JSON ({type(exc).__name__}: {exc})") from exc
            return cls.from_dict(data)
        if path.suffix == ".npz":
            try:
                with np.load(path, allow_pickle=False) as z:
                    return cls.from_npz_dict(z)
            except Exception as exc:  # a damaged zip / .npy raises many types (BadZipFile, EOFError, zlib.error...)
                raise ValueError(f"{path}: not a readable trace NPZ ({type(exc).__name__}: {exc})") from exc
        raise ValueError(f"{path}: a trace is read from .json or .npz")


def validate(t: Trace) -> None:
    """Check shapes against tokens (the bertviz lesson: say exactly what disagrees)."""
    n, m = len(t.source_tokens), len(t.target_tokens)
    if len(t.decoder_input_tokens) != m:
        raise ValueError(f"trace: {len(t.decoder_input_tokens)} decoder input tokens but {m} target tokens")
    if len(t.steps) != m:
        raise ValueError(f"trace: {len(t.steps)} steps but {m} target tokens")
    expected = {"encoder_self_attention": (n, n), "decoder_self_attention": (m, m), "cross_attention": (m, n)}
    heads = None
    for kind, (q, k) in expected.items():
        a = getattr(t, kind)
        if not isinstance(a, np.ndarray) or a.ndim != 4:
            raise ValueError(f"trace: {kind} must be a 4-d array (layers, heads, queries, keys)")
        if a.shape[2:] != (q, k):
            raise ValueError(f"trace: {kind} has queries x keys {a.shape[2:]} but the tokens give {(q, k)}")
        if heads is not None and a.shape[1] != heads:
            raise ValueError(f"trace: {kind} has {a.shape[1]} heads, other kinds have {heads}")
        heads = a.shape[1]
    if t.decoder_self_attention.shape[0] != t.cross_attention.shape[0]:
        raise ValueError("trace: decoder self-attention and cross-attention have different layer counts")
    if t.contributions is not None:
        for g in CONTRIBUTION_GROUPS:
            for kind in KINDS:
                if t.contributions[g][kind].shape != getattr(t, kind).shape:
                    raise ValueError(f"trace: contributions {g} {kind} is shaped {t.contributions[g][kind].shape}, "
                                     f"not as the attention {getattr(t, kind).shape}")
        if t.contributions["source_share"].shape != (m,):
            raise ValueError(f"trace: contributions source_share has shape {t.contributions['source_share'].shape}, "
                             f"not ({m},)")
    if t.lens is not None:
        check_lens(t.lens, m, t.cross_attention.shape[0])
    if t.saliency is not None:
        check_saliency(t.saliency, m, n)
    if t.source is not None:
        check_source(t.source, n)


def read_contributions(d: Any) -> dict[str, Any] | None:
    """The contributions object of a JSON trace (lists) -> arrays; None when absent."""
    if d is None:
        return None
    return {"method": str(d["method"]),
            **{g: {k: np.asarray(d[g][k], dtype=np.float32) for k in KINDS} for g in CONTRIBUTION_GROUPS},
            "source_share": np.asarray(d["source_share"], dtype=np.float32)}
