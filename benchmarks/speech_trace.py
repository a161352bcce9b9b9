"""The trace of a clip on a speech model: `engine.trace(audio=...)` (read the clip, log-mel, encoder, greedy decoding
through the one loop with the forced prefix, the window's attention collapsed onto the clip's axis), CPU seconds
and wall seconds, medians over `--repeats` after one warm-up; torch on one thread, so CPU seconds do not depend on
what else the shared machine runs.

Cases (targets in docs/speech.md):
- the shipped speech model (checkpoints/spoken-grammar), a 5 s clip of its held-out test speech (the first clips of
  assets/speech/test joined, cut at 5 s), free greedy decoding to its end token: <= 1 s;
- whisper-tiny's dimensions (4 + 4 layers, 6 heads, d_model 384, 51,865-row vocabulary; random weights,
  harness/models/whisper.whisper_sized), a 10 s clip: <= 3 s;
- whisper-small's dimensions (12 + 12 layers, 12 heads, d_model 768), a 10 s clip: <= 15 s; and a 30 s clip (the
  whole window, no padding band), with the process's peak resident memory.
A random model never writes its end token, so its runs stop at `--tokens` decoder rows (the forced prefix and
what a transcript of the clip would take, about three tokens a second); the clip is test tones
(harness/models/whisper.clip), which costs what speech costs.

    .venv/bin/python -m benchmarks.speech_trace            # all cases (builds ~1.3 GB of random folders)
    .venv/bin/python -m benchmarks.speech_trace --quick    # the shipped model and whisper-tiny only, 3 repeats
    .venv/bin/python -m benchmarks.speech_trace --only whisper-small --repeats 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "checkpoints" / "spoken-grammar"
TEST_CLIPS = ROOT / "assets" / "speech" / "test"


def speech(seconds: float):
    """(samples, 16000): the shipped test clips in list order, joined, cut at `seconds`."""
    import numpy as np
    from attention_lens.model.audio import read_audio
    from attention_lens.model.audio.clips import read_clip_list

    parts, total = [], 0
    for line in read_clip_list(TEST_CLIPS / "list.tsv"):
        samples = read_audio(line.path).samples
        parts.append(samples)
        total += len(samples)
        if total >= seconds * 16_000:
            break
    return np.concatenate(parts)[: int(seconds * 16_000)], 16_000


def measure(engine, audio, repeats: int, max_len: int | None) -> dict:
    """Medians of CPU and wall seconds of engine.trace(audio=audio) over `repeats` runs after one warm-up."""
    from attention_lens.model.engine import DecodeOptions

    options = DecodeOptions(max_len=max_len)
    trace = engine.trace(audio=audio, options=options)
    cpu, wall = [], []
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        trace = engine.trace(audio=audio, options=options)
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return {"cpu_s": statistics.median(cpu), "wall_s": statistics.median(wall), "rows": trace.m, "n": trace.n,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def load_timed(folder: Path):
    from attention_lens.model.engine.loader import load_engine

    c0, w0 = time.process_time(), time.perf_counter()
    engine = load_engine(folder)
    return engine, time.process_time() - c0, time.perf_counter() - w0


def main() -> None:
    from harness.models.whisper import clip, whisper_sized

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="the shipped model and whisper-tiny's dimensions only")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tokens", type=int, default=32, help="decoder rows of a random model's 10 s run")
    parser.add_argument("--only", choices=("shipped", "whisper-tiny", "whisper-small"), help="one model's cases")
    parser.add_argument("--long-repeats", type=int, default=1, help="repeats of the 30 s whisper-small case")
    args = parser.parse_args()
    repeats = 3 if args.quick else args.repeats
    torch.set_num_threads(1)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        cases = [("shipped", 5.0, 1.0), ("whisper-tiny", 10.0, 3.0)]
        if not args.quick:
            cases += [("whisper-small", 10.0, 15.0), ("whisper-small", 30.0, None)]
        if args.only:
            cases = [c for c in cases if c[0] == args.only]
        engines = {}
        for name, seconds, target in cases:
            if name not in engines:
                folder = SHIPPED if name == "shipped" else whisper_sized(Path(tmp) / name, name)
                engines[name] = (folder, *load_timed(folder))
            folder, engine, load_cpu, load_wall = engines[name]
            random = folder != SHIPPED
            max_len = None if not random else (args.tokens if seconds <= 10 else 3 * args.tokens)
            audio = speech(seconds) if not random else (clip(seconds), 16_000)
            result = measure(engine, audio, args.long_repeats if seconds > 10 else repeats, max_len)
            rows.append({"model": folder.name if not random else f"{name} dims (random)", "clip_s": seconds,
                         "target_s": target, "load_cpu_s": load_cpu, "load_wall_s": load_wall,
                         "max_len": max_len, **result})
            print(json.dumps(rows[-1]), flush=True)
    load = os.getloadavg()
    print(f"\n{platform.processor() or platform.machine()}, torch {torch.__version__} (1 thread), load average "
          f"{load[0]:.1f} {load[1]:.1f} {load[2]:.1f}, medians of {repeats}\n")
    print("| model | clip | decoder rows | source positions | trace CPU | trace wall | target | | load CPU | "
          "peak RSS |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        met = "" if r["target_s"] is None else ("met" if r["cpu_s"] <= r["target_s"] else "not met")
        target = "" if r["target_s"] is None else f"<= {r['target_s']:g} s"
        print(f"| {r['model']} | {r['clip_s']:g} s | {r['rows']} | {r['n']} | {r['cpu_s']:.2f} s | "
              f"{r['wall_s']:.2f} s | {target} | {met} | {r['load_cpu_s']:.1f} s | {r['peak_rss_mb']:.0f} MB |")


if __name__ == "__main__":
    main()
