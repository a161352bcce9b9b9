"""The source axis of a speech model's Trace: the clip's encoder positions, then ONE position for the padding.

A Whisper-style encoder reads a fixed window (Whisper: 30 s of log-mel, 3,000 frames of 10 ms, halved by its
second convolution to 1,500 positions of 20 ms), and every clip is padded with silence to fill it. A Trace keeps
the positions the clip covers and collapses every padding position into one band, the last source position:

- cross-attention (L, h, m, N) -> (L, h, m, n): the band's column is the SUM of the weights on all padding keys,
  so each row still sums to 1 and the band shows how much the decoder looked at the padding;
- encoder self-attention (L, h, N, N) -> (L, h, n, n): keys summed the same way; the band's row is the MEAN of
  the padding queries' rows (what a typical padding position attended to), so it sums to 1 too.

N is the window's positions, n = the clip's positions + 1 (or N when the clip fills the window: no band).
`AudioAxis.record` builds the Trace's `source` object (docs/formats.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

MEL_HOP_S = 0.01  # Whisper's log-mel: a 10 ms hop (160 samples at 16 kHz)


@dataclass(frozen=True)
class AudioAxis:
    """Where a clip lies in the encoder's window. n_positions: the window's encoder positions (N); clip_positions:
    those the clip covers (the first ones); frame_s: seconds per encoder position."""

    n_positions: int
    clip_positions: int
    frame_s: float

    def __post_init__(self) -> None:
        if not 1 <= self.clip_positions <= self.n_positions:
            raise ValueError(f"a clip covers 1 to {self.n_positions} positions, not {self.clip_positions}")

    @classmethod
    def of_clip(cls, duration_s: float, n_positions: int, frame_s: float) -> AudioAxis:
        """The axis of a clip of duration_s: the positions whose start lies inside it (at least one)."""
        covered = math.ceil(round(duration_s / frame_s, 6))
        return cls(n_positions, min(max(covered, 1), n_positions), frame_s)

    @property
    def window_s(self) -> float:
        return self.n_positions * self.frame_s

    @property
    def padded(self) -> bool:
        """Whether the window holds padding after the clip (then the last source position is its band)."""
        return self.clip_positions < self.n_positions

    @property
    def n(self) -> int:
        """Source positions in the Trace: the clip's, plus the padding band."""
        return self.clip_positions + int(self.padded)

    def times(self) -> list[float]:
        """The start in seconds of each source position (the band's: where the padding starts)."""
        return [round(k * self.frame_s, 6) for k in range(self.n)]

    def labels(self) -> list[str]:
        """The source axis as a person reads it: "0.00 s", "0.02 s", ..., "padding 3.20–30.00 s"."""
        out = [f"{k * self.frame_s:.2f} s" for k in range(self.clip_positions)]
        if self.padded:
            out.append(f"padding {self.clip_positions * self.frame_s:.2f}–{self.window_s:.2f} s")
        return out

    def collapse_keys(self, weights: np.ndarray) -> np.ndarray:
        """(..., N) attention over the window's keys -> (..., n): the padding keys' weights summed into the band."""
        if weights.shape[-1] != self.n_positions:
            raise ValueError(f"expected {self.n_positions} keys, got {weights.shape[-1]}")
        if not self.padded:
            return weights
        clip = weights[..., : self.clip_positions]
        band = weights[..., self.clip_positions:].sum(-1, keepdims=True, dtype=np.float64).astype(weights.dtype)
        return np.concatenate([clip, band], axis=-1)

    def collapse_encoder(self, weights: np.ndarray) -> np.ndarray:
        """(L, h, N, N) encoder self-attention -> (L, h, n, n): keys as collapse_keys; the band's row the mean of
        the padding queries' rows."""
        keys = self.collapse_keys(weights)
        if not self.padded:
            return keys
        rows = keys[..., : self.clip_positions, :]
        band = keys[..., self.clip_positions:, :].mean(-2, keepdims=True, dtype=np.float64).astype(keys.dtype)
        return np.concatenate([rows, band], axis=-2)

    def record(self, mel: np.ndarray, duration_s: float, rate: int, language: str | None,
               task: str | None) -> dict[str, Any]:
        """The Trace's `source` object for this clip; mel: (n_mels, frames) the log-mel of the clip only."""
        padding = None
        if self.padded:
            padding = {"index": self.n - 1, "start_s": round(self.clip_positions * self.frame_s, 6),
                       "end_s": round(self.window_s, 6), "frames": self.n_positions - self.clip_positions}
        return {"kind": "audio", "rate": int(rate), "duration_s": float(duration_s),
                "window_s": round(self.window_s, 6), "frame_s": self.frame_s, "times": self.times(), "padding": padding,
                "mel": np.ascontiguousarray(mel, dtype=np.float32), "mel_hop_s": MEL_HOP_S, "language": language,
                "task": task}


def check_source(source: dict[str, Any], n: int) -> None:
    """Raise ValueError unless `source` is a well-formed audio source object for a Trace of n source positions."""
    if not isinstance(source, dict):
        raise ValueError("trace: source must be an object")
    if source.get("kind") != "audio":
        raise ValueError(f"trace: source kind {source.get('kind')!r} is not known (audio)")
    missing = [k for k in ("rate", "duration_s", "window_s", "frame_s", "times", "padding", "mel", "mel_hop_s")
               if k not in source]
    if missing:
        raise ValueError(f"trace: the audio source lacks {missing}")
    if len(source["times"]) != n:
        raise ValueError(f"trace: the audio source has {len(source['times'])} times but the trace {n} source "
                         f"positions")
    mel = source["mel"]
    if not isinstance(mel, np.ndarray) or mel.ndim != 2:
        raise ValueError("trace: the audio source's mel must be a 2-d array (mel bins, frames)")
    padding = source["padding"]
    if padding is not None and (not isinstance(padding, dict) or padding.get("index") != n - 1):
        raise ValueError(f"trace: the audio source's padding band must be the last source position ({n - 1})")
    if source.get("task") not in (None, "transcribe", "translate"):
        raise ValueError(f"trace: the audio source's task {source.get('task')!r} is not transcribe or translate")


def read_source(d: Any) -> dict[str, Any] | None:
    """The source object of a JSON trace (mel as lists) -> with its mel as a float32 array; None when absent."""
    if d is None:
        return None
    if not isinstance(d, dict):
        raise ValueError("trace: source must be an object")
    out = dict(d)
    if "mel" in out:
        out["mel"] = np.asarray(out["mel"], dtype=np.float32)
        if out["mel"].ndim == 1 and out["mel"].size == 0:
            out["mel"] = out["mel"].reshape(0, 0)
    return out
