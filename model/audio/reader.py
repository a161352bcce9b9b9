"""Read a clip from a file, bytes or an array into mono float32 samples at 16 kHz, or say plainly why not."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile
import soxr
from attention_lens.model.engine.errors import ModelInputError

SAMPLE_RATE = 16_000  # what Whisper's feature extractor reads
MAX_SECONDS = 30.0  # Whisper's window
SILENCE_PEAK = 1e-4  # a peak amplitude below this (-80 dBFS) is a silent recording
MAX_CHANNELS = 64


class AudioError(ModelInputError):
    """A clip that cannot be read or run: the message names it and says why, in one line."""


@dataclass(frozen=True)
class Audio:
    """One clip as the models read it: mono float32 samples in [-1, 1] at `rate` (16 kHz)."""

    samples: np.ndarray
    rate: int
    name: str  # the file's name, or "array", "upload", "microphone"
    original_rate: int
    channels: int

    @property
    def duration_s(self) -> float:
        return len(self.samples) / self.rate


def read_audio(source: str | Path | bytes | tuple[np.ndarray, int] | Audio, *, name: str | None = None,
               max_seconds: float = MAX_SECONDS) -> Audio:
    """The clip in `source` as 16 kHz mono float32.

    source: a path, the bytes of a file (an upload, a microphone recording), or (samples, rate) with samples
    shaped (n,) or (n, channels). Raises AudioError for anything that is not audio, is empty, longer than
    max_seconds, holds NaN or infinite samples, or is silent.
    """
    if isinstance(source, Audio):
        return source
    if isinstance(source, tuple):
        samples, rate = source
        label = name or "array"
        data = np.asarray(samples)
        if data.ndim not in (1, 2):
            raise AudioError(f"{label}: expected samples shaped (n,) or (n, channels), got shape {data.shape}")
        rate = int(rate)
        if rate <= 0:
            raise AudioError(f"{label}: the sample rate must be positive, got {rate}")
        _check_length(label, len(data), rate, max_seconds)
        channels = 1 if data.ndim == 1 else data.shape[1]
        data = _as_float(data)
    else:
        label = name or (Path(source).name if not isinstance(source, bytes) else "upload")
        opened = io.BytesIO(source) if isinstance(source, bytes) else Path(source)
        if not isinstance(source, bytes) and not Path(source).is_file():
            raise AudioError(f"{source}: no such audio file")
        if (len(source) if isinstance(source, bytes) else Path(source).stat().st_size) == 0:
            raise AudioError(f"{label}: an empty file (0 bytes)")  # libsndfile would say "Format not recognised"
        try:
            info = soundfile.info(opened)
        except (soundfile.LibsndfileError, RuntimeError, TypeError) as e:
            raise AudioError(f"{label}: not an audio file this tool reads (WAV, FLAC, OGG, MP3): {_reason(e)}") from e
        rate, channels = int(info.samplerate), int(info.channels)
        if channels > MAX_CHANNELS:
            raise AudioError(f"{label}: {channels} channels; at most {MAX_CHANNELS} are mixed down")
        if info.frames > 0:
            _check_length(label, info.frames, rate, max_seconds)
        if isinstance(opened, io.BytesIO):
            opened.seek(0)
        try:
            data, rate = soundfile.read(opened, dtype="float32", always_2d=True)
        except (soundfile.LibsndfileError, RuntimeError) as e:
            raise AudioError(f"{label}: the file is damaged or cut short: {_reason(e)}") from e
        _check_length(label, len(data), rate, max_seconds)
    if len(data) == 0:
        raise AudioError(f"{label}: the clip has no samples")
    if not np.isfinite(data).all():
        bad = int((~np.isfinite(data)).sum())
        raise AudioError(f"{label}: {bad} samples are NaN or infinite; a clip must hold finite samples")
    mono = data.mean(axis=1) if data.ndim == 2 else data
    mono = np.ascontiguousarray(mono, dtype=np.float32)
    if rate != SAMPLE_RATE:
        mono = soxr.resample(mono, rate, SAMPLE_RATE, quality="HQ").astype(np.float32)
    peak = float(np.abs(mono).max()) if len(mono) else 0.0
    if peak < SILENCE_PEAK:
        raise AudioError(f"{label}: the clip is silent (peak amplitude {peak:.1e}); there is no speech to run")
    return Audio(samples=mono, rate=SAMPLE_RATE, name=label, original_rate=int(rate), channels=int(channels))


def _check_length(label: str, frames: int, rate: int, max_seconds: float) -> None:
    seconds = frames / rate
    if seconds > max_seconds:
        raise AudioError(f"{label}: the clip lasts {_duration(seconds)}; this model reads at most "
                         f"{max_seconds:g} s (cut it into parts of at most {max_seconds:g} s)")


def _as_float(data: np.ndarray) -> np.ndarray:
    if np.issubdtype(data.dtype, np.integer):
        scale = float(np.iinfo(data.dtype).max) + 1.0
        return data.astype(np.float32) / scale
    return data.astype(np.float32, copy=False)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60)} s"


def _reason(e: Exception) -> str:
    text = str(e).strip()
    return text.splitlines()[-1].split(": ")[-1] if text else type(e).__name__
