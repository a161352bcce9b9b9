"""An audio run made ready for the browser: its source axis pooled to a size a page can send, its log-mel
spectrogram as bytes for the strip under the attention, and its samples for playing a stretch. No Streamlit here.

A Trace of a clip (its `source` object, kind "audio": docs/formats.md) has one source position per encoder frame
(Whisper: 20 ms) and one last position for the padding. A 10 s clip has 500 frames, and its encoder
self-attention alone is 500 x 500 cells per head: at whisper-tiny's 4 layers x 6 heads that is 6 million cells,
12 MB as half floats. So a long clip's frames are pooled, a whole number of frames per column, until at most
MAX_COLUMNS columns remain: a key column holds the SUM of its frames' weights (each row still sums to 1), a query
row of encoder self-attention the MEAN of its frames' rows (itself a row that sums to 1). The padding position
stays one column (and one row) of its own. The weights go as half floats, as a text run's: one byte a cell scaled
by each row's largest weight ("u8") loses a clip's small weights when the padding band holds most of a row (an
untrained model's rows: 95 % on the padding, every clip frame under 1/510 of it, drawn as zero).
"""

from __future__ import annotations

import math
import struct
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

MAX_COLUMNS = 180  # clip columns a page receives at most: 10 s at 60 ms a column; 168 x 168 x 24 heads = 1.4 MB
ENCODING = "f16"  # two bytes a cell (app/render/stepper: error <= 2.5e-4)
PLAYBACK_RATE = 16_000  # the samples the browser plays a stretch from, as 16-bit integers


def audio_source(trace: Trace) -> dict[str, Any] | None:
    """The Trace's audio source object, or None for a text run (or a Trace with no source object)."""
    source = trace.source
    return source if source is not None and source.get("kind") == "audio" else None


def clip_positions(source: dict[str, Any], n: int) -> int:
    """How many source positions are the clip's own frames (the padding's, when there is one, is the last)."""
    padding = source.get("padding")
    return int(padding["index"]) if padding else n


def pool_factor(frames: int, max_columns: int = MAX_COLUMNS) -> int:
    """Frames per column: the least whole number that leaves at most max_columns columns."""
    return max(1, math.ceil(frames / max_columns))


def _groups(frames: int, factor: int) -> list[tuple[int, int]]:
    return [(a, min(a + factor, frames)) for a in range(0, frames, factor)]


def _pool_keys(w: np.ndarray, groups: list[tuple[int, int]], n: int) -> np.ndarray:
    """(..., n) -> (..., columns): each group's keys summed, the keys after the clip's (the padding) kept."""
    clip = groups[-1][1] if groups else 0
    parts = [w[..., a:b].sum(axis=-1, keepdims=True) for a, b in groups]
    return np.concatenate([*parts, w[..., clip:n]], axis=-1)


def _pool_queries(w: np.ndarray, groups: list[tuple[int, int]], n: int) -> np.ndarray:
    """(..., n, k) -> (..., rows, k): each group's query rows averaged, the rows after the clip's kept."""
    clip = groups[-1][1] if groups else 0
    parts = [w[..., a:b, :].mean(axis=-2, keepdims=True) for a, b in groups]
    return np.concatenate([*parts, w[..., clip:n, :]], axis=-2)


def pooled(trace: Trace, factor: int) -> Trace:
    """The run with its clip frames pooled `factor` to a column (the module's docstring says how); its source
    object says so ("pooled": factor, "frame_s" the column's length, "times" each column's start). Factor 1: the
    run itself. The pooled run drops what is per source position beyond the attention (contributions, saliency)."""
    source = audio_source(trace)
    if source is None or factor <= 1:
        return trace
    n = trace.n
    frames = clip_positions(source, n)
    groups = _groups(frames, factor)
    enc = _pool_queries(_pool_keys(np.asarray(trace.encoder_self_attention, dtype=np.float32), groups, n),
                        groups, n)
    cross = _pool_keys(np.asarray(trace.cross_attention, dtype=np.float32), groups, n)
    times = list(source["times"])
    new_times = [float(times[a]) for a, _ in groups] + [float(t) for t in times[frames:n]]
    frame_s = float(source["frame_s"]) * factor
    labels = [f"{t:.2f} s" for t in new_times[:len(groups)]] + list(trace.source_tokens[frames:])
    padding = source.get("padding")
    new_source = {**source, "times": new_times, "frame_s": frame_s, "pooled": factor,
                  "padding": {**padding, "index": len(groups)} if padding else None}
    return replace(trace, source_tokens=tuple(labels), encoder_self_attention=enc.astype(np.float32),
                   cross_attention=cross.astype(np.float32), contributions=None, saliency=None, beams=(),
                   beam_steps=(), source=new_source)


def for_browser(trace: Trace) -> Trace:
    """The run as a page sends it: an audio run pooled to at most MAX_COLUMNS clip columns; a text run as it is."""
    source = audio_source(trace)
    if source is None:
        return trace
    return pooled(trace, pool_factor(clip_positions(source, trace.n)))


def mel_bytes(mel: np.ndarray) -> tuple[bytes, float, float]:
    """A log-mel spectrogram (bins, frames) as one byte a value, frame-major (each frame's bins, lowest first),
    scaled from its least to its largest value; returns (bytes, least, largest)."""
    x = np.nan_to_num(np.asarray(mel, dtype=np.float64))
    lo, hi = (float(x.min()), float(x.max())) if x.size else (0.0, 0.0)
    span = hi - lo if hi > lo else 1.0
    codes = np.clip(np.rint((x - lo) / span * 255), 0, 255).astype(np.uint8)
    return codes.T.tobytes(), lo, hi


def sample_bytes(samples: np.ndarray | None) -> bytes:
    """Mono float samples in [-1, 1] as little-endian 16-bit integers (what the browser plays a stretch from)."""
    if samples is None:
        return b""
    x = np.clip(np.nan_to_num(np.asarray(samples, dtype=np.float64)), -1.0, 1.0)
    return np.rint(x * 32767).astype("<i2").tobytes()


def audio_tail(trace: Trace, samples: np.ndarray | None, offset: int) -> tuple[dict[str, Any], bytes]:
    """The header's "audio" object and the bytes it points into, placed `offset` bytes after the packed weights'
    start (app/render/stepper.pack's `tail`). Keys: rate, duration_s, frame_s (a column's length), pooled (frames
    per column), times (each source column's start, seconds), padding ({index, start_s, end_s} or null), mel
    ({offset, bins, frames, hop_s, lo, hi}: one byte a value, frame-major), samples ({offset, n, rate}: 16-bit;
    n 0 when the page has no samples), language and task. Every offset is a multiple of 4."""
    source = audio_source(trace)
    if source is None:
        raise ValueError("not an audio run: its Trace has no audio source")
    mel = np.asarray(source["mel"])
    mel_data, lo, hi = mel_bytes(mel)
    mel_data += b"\0" * ((-len(mel_data)) % 4)
    pcm = sample_bytes(samples)
    padding = source.get("padding")
    header = {
        "rate": int(source.get("rate", PLAYBACK_RATE)), "duration_s": float(source["duration_s"]),
        "frame_s": float(source["frame_s"]), "pooled": int(source.get("pooled", 1)),
        "times": [round(float(t), 4) for t in source["times"]],
        "padding": ({"index": int(padding["index"]), "start_s": float(padding["start_s"]),
                     "end_s": float(padding["end_s"])} if padding else None),
        "mel": {"offset": offset, "bins": int(mel.shape[0]), "frames": int(mel.shape[1]),
                "hop_s": float(source.get("mel_hop_s", 0.01)), "lo": lo, "hi": hi},
        "samples": {"offset": offset + len(mel_data), "n": len(pcm) // 2, "rate": PLAYBACK_RATE},
        "language": source.get("language"), "task": source.get("task"),
    }
    return header, mel_data + pcm


def unpack_audio(blob: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The spectrogram bytes (bins, frames) and the samples of a packed audio run, read back (tests, benchmarks)."""
    import json

    (size,) = struct.unpack("<I", blob[4:8])
    header = json.loads(blob[8:8 + size].decode("utf-8"))
    a, base = header["audio"], 8 + size
    mel = np.frombuffer(blob, np.uint8, a["mel"]["bins"] * a["mel"]["frames"], base + a["mel"]["offset"])
    pcm = np.frombuffer(blob, "<i2", a["samples"]["n"], base + a["samples"]["offset"])
    return mel.reshape(a["mel"]["frames"], a["mel"]["bins"]).T, pcm


def stretch(weights: np.ndarray, times: list[float], frame_s: float, clip_columns: int,
            share: float = 0.5) -> tuple[float, float] | None:
    """The stretch of the clip a row of cross-attention attends to: the span (start, end) in seconds of the
    fewest clip columns, taken largest first, that hold `share` of the row's weight on the clip; None when the
    row puts no weight on the clip. Its twin in the browser: stepper/audio.js stretchOf."""
    w = np.nan_to_num(np.asarray(weights, dtype=np.float64)[:clip_columns])
    total = float(w.sum())
    if clip_columns == 0 or total <= 0:
        return None
    order = np.argsort(-w, kind="stable")
    kept, mass = [], 0.0
    for i in order:
        kept.append(int(i))
        mass += float(w[i])
        if mass >= share * total:
            break
    return float(times[min(kept)]), float(times[max(kept)]) + frame_s
