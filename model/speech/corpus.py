"""A spoken corpus of the English grammar: espeak-ng speech, 16 kHz, with gold word timings.

Sentences come from the en-fr corpus's own English side and its own split (`model.corpora.generate`): train
sentences are spoken for `train`, valid sentences for `valid`, test sentences for `test`. Each split has its own
voices (espeak-ng dialect + variant) and speaking rates: no variant and no rate of `valid` or `test` is ever heard
in `train`. Pitch, pitch range, loudness and a light white noise (25–45 dB SNR) vary in every split.

Each clip goes 22,050 Hz (espeak-ng) → `read_audio` (soxr) → 16 kHz. A clip longer than the model's window less a
margin is dropped and another sentence drawn. Written per split into `OUT/<split>/`:

- `list.tsv`: `clips/<id>.flac<TAB>transcript` (paths relative to the list; transcripts as the grammar writes
  them without the space before the final full stop: `the cat sleeps.`);
- `timings.ctm`: `<id> 1 <start> <duration> <word>` per word, seconds with 3 decimals (NIST CTM);
- `clips/<id>.flac` (16 kHz, 16-bit), left out of `train` unless asked for (`keep_train_audio`);
- `features.npy` (float16, clips × 80 × window frames: Whisper's log-mel) and `meta.tsv` (id, voice, rate,
  pitch, snr, seconds) for training and quick evaluation.

`write_wav_set` writes clips of sentences never trained on as 22,050 Hz WAV files for the resampler's path.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import soundfile
from attention_lens.model.audio.reader import read_audio
from attention_lens.model.speech.synthesis import Spoken, Synthesiser

DIALECTS = ("en", "en-us", "en-gb-x-rp", "en-gb-scotland", "en-029", "en-gb-x-gbclan", "en-gb-x-gbcwmd", "en-us-nyc")
VARIANTS = {
    "train": ("", "m1", "m2", "m3", "m5", "m8", "f1", "f2", "f3", "klatt", "klatt2", "klatt4", "klatt6",
              "Andy", "Annie", "edward", "john", "linda", "max", "paul"),
    "valid": ("m6", "f5", "klatt5"),
    "test": ("m4", "m7", "f4", "klatt3"),
}
RATES = {  # words a minute
    "train": (140, 150, 160, 175, 190, 205, 220),
    "valid": (155, 182),
    "test": (145, 168, 198),
}
SNR_DB = (25.0, 45.0)
MARGIN_S = 0.3  # a clip must end this long before the window does


@dataclass(frozen=True)
class Clip:
    id: str
    transcript: str
    voice: str
    rate: int
    pitch: int
    snr_db: float
    samples: np.ndarray  # 16 kHz float32
    spoken: Spoken  # what espeak-ng said, 22,050 Hz, with the word times


def transcript_of(grammar_text: str) -> str:
    """`the cat sleeps .` → `the cat sleeps.`"""
    return " ".join(grammar_text.split()).replace(" .", ".")


def sentences(split: str, n: int, seed: int = 0) -> list[str]:
    """`n` English sentences of the en-fr grammar's `split` (more drawn than asked, so that clips too long can
    be skipped), in the grammar's order."""
    from attention_lens.model.corpora import generate

    want = int(n * 1.3) + 20
    sizes = {"train": 1, "valid": 1, "test": 1}
    sizes[split] = want
    draw = generate("en-fr", seed=seed, n_train=sizes["train"], n_valid=sizes["valid"], n_test=sizes["test"],
                    n_combo=1)
    return [ex.source for ex in draw[split]]


def voices(split: str) -> list[str]:
    return [d + (f"+{v}" if v else "") for d in DIALECTS for v in VARIANTS[split]]


def speak(synth: Synthesiser, text: str, split: str, rng: random.Random, clip_id: str,
          max_seconds: float | None = None) -> Clip | None:
    """One clip of `text` in a voice and rate of `split`, with pitch, loudness and noise drawn from `rng`;
    None when it is longer than `max_seconds`."""
    voice = rng.choice(voices(split))
    rate = rng.choice(RATES[split])
    pitch, pitch_range = rng.randint(25, 75), rng.randint(20, 80)
    snr_db = rng.uniform(*SNR_DB)
    spoken = synth.speak(text, voice=voice, rate=rate, pitch=pitch, pitch_range=pitch_range)
    if max_seconds is not None and spoken.duration_s > max_seconds:
        return None
    audio = read_audio((spoken.samples, spoken.rate), name=clip_id).samples
    power = float(np.mean(audio ** 2)) or 1e-8
    noise = np.random.default_rng(rng.getrandbits(32)).normal(0.0, np.sqrt(power / 10 ** (snr_db / 10)), audio.shape)
    mixed = audio + noise.astype(np.float32)
    mixed *= rng.uniform(0.3, 0.9) / max(float(np.abs(mixed).max()), 1e-6)
    return Clip(clip_id, transcript_of(text), voice, rate, pitch, round(snr_db, 1), mixed.astype(np.float32), spoken)


def clips(split: str, n: int, seed: int = 0, max_seconds: float | None = None) -> Iterator[Clip]:
    """`n` clips of `split`, deterministic for a seed."""
    synth = Synthesiser()
    rng = random.Random(f"speech-{split}-{seed}")
    made = 0
    for k, text in enumerate(sentences(split, n, seed)):
        if made == n:
            return
        clip = speak(synth, text, split, rng, f"{split}-{k:06d}", max_seconds)
        if clip is not None:
            made += 1
            yield clip
    raise ValueError(f"the {split} split ran out of sentences short enough for {max_seconds} s after {made} clips")


def ctm_lines(clip: Clip) -> list[str]:
    return [f"{clip.id} 1 {w.start:.3f} {w.end - w.start:.3f} {w.word}" for w in clip.spoken.words]


def write_split(out: str | Path, split: str, n: int, feature_extractor, seed: int = 0,
                keep_audio: bool = True, batch: int = 64, log=print) -> Path:
    """Write `n` clips of `split` into `out/split/` (see the module docstring); returns that folder."""
    folder = Path(out) / split
    (folder / "clips").mkdir(parents=True, exist_ok=True)
    window = float(feature_extractor.chunk_length)
    frames = feature_extractor.nb_max_frames
    features = np.lib.format.open_memmap(folder / "features.npy", mode="w+", dtype=np.float16,
                                         shape=(n, feature_extractor.feature_size, frames))
    pending: list[np.ndarray] = []
    done = 0
    with open(folder / "list.tsv", "w", encoding="utf-8", newline="\n") as lst, \
            open(folder / "timings.ctm", "w", encoding="utf-8", newline="\n") as ctm, \
            open(folder / "meta.tsv", "w", encoding="utf-8", newline="\n") as meta:
        meta.write("id\tvoice\trate\tpitch\tsnr_db\tseconds\n")
        for clip in clips(split, n, seed, max_seconds=window - MARGIN_S):
            if keep_audio:
                soundfile.write(folder / "clips" / f"{clip.id}.flac", clip.samples, 16_000, subtype="PCM_16")
            lst.write(f"clips/{clip.id}.flac\t{clip.transcript}\n")
            ctm.write("\n".join(ctm_lines(clip)) + "\n")
            meta.write(f"{clip.id}\t{clip.voice}\t{clip.rate}\t{clip.pitch}\t{clip.snr_db}\t"
                       f"{len(clip.samples) / 16_000:.3f}\n")
            pending.append(clip.samples)
            if len(pending) == batch:
                features[done:done + batch] = _log_mel(feature_extractor, pending)
                done += batch
                pending = []
                if done % (batch * 20) == 0:
                    log(f"{split}: {done}/{n} clips")
        if pending:
            features[done:done + len(pending)] = _log_mel(feature_extractor, pending)
    features.flush()
    log(f"{split}: {n} clips -> {folder}")
    return folder


def _log_mel(feature_extractor, batch: list[np.ndarray]) -> np.ndarray:
    return feature_extractor(batch, sampling_rate=16_000, return_tensors="np").input_features.astype(np.float16)


def write_wav_set(out: str | Path, n: int, window_s: float, seed: int = 0, skip: int = 2000) -> Path:
    """`n` clips of test sentences (never trained on; the grammar's test sentences after the first `skip`, which
    the FLAC test split draws from) in test voices and rates as 22,050 Hz 16-bit WAV files, without noise, with
    `list.tsv` and `timings.ctm`, in `out/`."""
    folder = Path(out)
    (folder / "clips").mkdir(parents=True, exist_ok=True)
    synth = Synthesiser()
    rng = random.Random(f"speech-wav-{seed}")
    texts = sentences("test", skip + 2 * n, seed)[skip:]
    made = 0
    with open(folder / "list.tsv", "w", encoding="utf-8", newline="\n") as lst, \
            open(folder / "timings.ctm", "w", encoding="utf-8", newline="\n") as ctm:
        for k, text in enumerate(texts):
            if made == n:
                break
            spoken = synth.speak(text, voice=rng.choice(voices("test")), rate=rng.choice(RATES["test"]),
                                 pitch=rng.randint(25, 75), pitch_range=rng.randint(20, 80))
            if spoken.duration_s > window_s - MARGIN_S:
                continue
            clip_id = f"wav-{k:04d}"
            soundfile.write(folder / "clips" / f"{clip_id}.wav", spoken.samples, spoken.rate, subtype="PCM_16")
            lst.write(f"clips/{clip_id}.wav\t{transcript_of(text)}\n")
            ctm.write("\n".join(f"{clip_id} 1 {w.start:.3f} {w.end - w.start:.3f} {w.word}"
                                for w in spoken.words) + "\n")
            made += 1
    return folder


def copy_subset(src: str | Path, dst: str | Path, max_bytes: int, max_clips: int = 300) -> int:
    """Copy the first clips of a written split (or the WAV set) into `dst`, as many as fit in `max_bytes` (at most
    `max_clips`), with their lines of `list.tsv`, `timings.ctm` and `meta.tsv` (where there is one). Returns how
    many."""
    import shutil

    src, dst = Path(src), Path(dst)
    (dst / "clips").mkdir(parents=True, exist_ok=True)
    kept, total = [], 0
    for line in (src / "list.tsv").read_text(encoding="utf-8").splitlines():
        size = (src / line.split("\t")[0]).stat().st_size
        if len(kept) == max_clips or total + size > max_bytes:
            break
        total += size
        kept.append(line)
    ids = set()
    for line in kept:
        rel = line.split("\t")[0]
        shutil.copyfile(src / rel, dst / rel)
        ids.add(Path(rel).stem)
    (dst / "list.tsv").write_text("".join(f"{line}\n" for line in kept), encoding="utf-8")
    ctm = (src / "timings.ctm").read_text(encoding="utf-8").splitlines()
    (dst / "timings.ctm").write_text("".join(f"{line}\n" for line in ctm if line.split()[0] in ids), encoding="utf-8")
    if (src / "meta.tsv").exists():
        meta = (src / "meta.tsv").read_text(encoding="utf-8").splitlines()
        (dst / "meta.tsv").write_text("".join(f"{line}\n" for line in meta[:1] + [m for m in meta[1:]
                                                                                  if m.split("\t")[0] in ids]),
                                      encoding="utf-8")
    return len(kept)
