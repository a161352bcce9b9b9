"""Explore on a speech model: how many bytes a clip's run sends to the browser, and how long the first picture takes
on a warm server.

- payload, offline: the stepper's packed run of a clip (app/render/spectrogram + app/render/stepper: frames pooled,
  half floats, the log-mel and the 16-bit samples after the weights) and the whole-clip player's WAV (st.audio of
  16 kHz samples: 16-bit PCM); the Trace is a real teacher-forced run of the model on a `--seconds` clip of test
  tones with a transcript of `--words` words (a random model's free running writes to its length limit, which no
  clip of speech does).
- in Chromium: the websocket bytes a fresh session receives from the page's first byte to the stepper's first
  picture drawn, and that time (a warm server: the model loaded and the run cached by an earlier session; each
  round a new browser page), median over `--rounds`. The server's warm-up thread is off (LENS_WARMUP=0): it starts
  kaleido's Chromium a few seconds after the first page, which is not the page's own cost.

The model: `--model FOLDER` (e.g. checkpoints/spoken-grammar), else a random-weight folder of whisper-tiny's
dimensions (4 + 4 layers, 6 heads, d_model 384: harness/models/whisper.py) built in a temporary folder.

    .venv/bin/python -m benchmarks.speech_page                       # whisper-tiny dims, 10 s clip, 5 rounds
    .venv/bin/python -m benchmarks.speech_page --model checkpoints/spoken-grammar --seconds 5
    .venv/bin/python -m benchmarks.speech_page --quick               # the tiny test Whisper, 2 s, 1 round
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import soundfile

from harness.browser import IDLE, launch
from harness.measure import WebsocketBytes
from harness.server import app_env, served

TRANSCRIPT = ("the cat sat on the mat and the small bird sings in the tall tree while my sister reads a long book "
              "every night near the river bank where the black dog barked")


def packed_bytes(folder: Path, clip_path: Path, transcript: str) -> dict:
    """The stepper's packed run and the player's WAV for one teacher-forced run of the clip, as Explore sends them."""
    from attention_lens.app.render import spectrogram
    from attention_lens.app.render import stepper as packing
    from attention_lens.model.audio import read_audio
    from attention_lens.model.engine import DecodeOptions, load_engine

    engine = load_engine(folder)
    audio = read_audio(clip_path)
    t0 = time.process_time()
    trace = engine.trace(audio=audio, target=transcript, options=DecodeOptions(mode="teacher_forced"))
    trace_cpu = time.process_time() - t0
    sent = spectrogram.for_browser(trace)
    encoded = packing.weights(sent, spectrogram.ENCODING)
    header, tail = spectrogram.audio_tail(sent, audio.samples, len(encoded[1]))
    blob = packing.pack(sent, encoding=spectrogram.ENCODING, extra={"audio": header}, encoded=encoded, tail=tail)
    wav = 44 + 2 * len(audio.samples)  # st.audio of float samples: a 16-bit PCM WAV
    return {"clip_s": round(audio.duration_s, 2), "frames": trace.n - 1, "columns": sent.n - 1,
            "frames_per_column": int(sent.source.get("pooled", 1)), "rows": trace.m,
            "layers": [engine.n_encoder_layers, engine.n_decoder_layers], "heads": engine.n_heads,
            "stepper_bytes": len(blob), "mel_and_samples_bytes": len(tail), "player_wav_bytes": wav,
            "total_mb": round((len(blob) + wav) / 2**20, 3), "trace_cpu_s": round(trace_cpu, 3)}


SPEECH_QUERY = "/?mode=teacher_forced&view=head&kind=cross"
TEXT_QUERY = "/?model=en-fr&text=the%20black%20cat%20sat%20on%20the%20mat%20.&mode=greedy&view=head&kind=cross"


def _rounds(browser, url: str, selector: str, rounds: int, width: int, height: int) -> dict:
    """One session to load and cache, then `rounds` new pages, each timed from goto to `selector` (the first
    picture drawn), with the websocket bytes received until then."""
    seconds, sizes = [], []
    for i in range(rounds + 1):
        page = browser.new_page(viewport={"width": width, "height": height})
        meter = WebsocketBytes().attach(page)
        start = time.perf_counter()
        page.goto(url)
        page.wait_for_selector(selector, timeout=300_000)
        took = time.perf_counter() - start
        page.wait_for_selector(IDLE)
        if i:  # the first session loaded the model and made the run: not a warm picture
            seconds.append(took)
            sizes.append(meter.total)
        page.close()
    return {"first_picture_s": [round(s, 3) for s in seconds], "median_s": round(statistics.median(seconds), 3),
            "websocket_mb_median": round(statistics.median(sizes) / 2**20, 3)}


def first_picture(env: dict[str, str], rounds: int, width: int = 1366, height: int = 768) -> dict:
    """Warm first pictures of the clip's run (the strip under cross-attention drawn) and, on the same server in the
    same minutes, of the shipped text model en-fr (its first picture drawn), as a yardstick of the machine's load.
    The load average of the machine is reported with them."""
    from playwright.sync_api import sync_playwright

    with served(env) as (url, _), sync_playwright() as p:
        browser = launch(p)
        try:
            speech = _rounds(browser, url + SPEECH_QUERY, "[data-testid=lens-stepper] .lens-mel", rounds, width,
                             height)
            text = _rounds(browser, url + TEXT_QUERY, "[data-testid=lens-stepper] canvas", rounds, width, height)
        finally:
            browser.close()
    return {"rounds": rounds, "speech": speech, "text_en_fr": text,
            "load_average_1min": float(Path("/proc/loadavg").read_text().split()[0])}


def main(argv: list[str] | None = None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, help="a Whisper folder (default: random weights of whisper-tiny's size)")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--words", type=int, default=28, help="words of the transcript teacher forcing feeds")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="the tiny test Whisper, a 2 s clip, one round")
    args = ap.parse_args(argv)
    from harness.models.whisper import build_whisper, clip, whisper_sized

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        if args.quick:
            args.seconds, args.rounds, args.words = 2.0, 1, 6
            folder = build_whisper(tmp / "tiny-whisper")
        else:
            folder = args.model.resolve() if args.model else whisper_sized(tmp / "whisper-tiny-dims", "whisper-tiny")
        clips = tmp / "clips"
        clips.mkdir()
        soundfile.write(clips / "bench.flac", clip(args.seconds), 16_000)
        transcript = " ".join((TRANSCRIPT.split(" ") * 4)[:args.words])
        (clips / "list.tsv").write_text(f"bench.flac\t{transcript}\n", encoding="utf-8")
        result = {"model": folder.name, "payload": packed_bytes(folder, clips / "bench.flac", transcript)}
        # LENS_WARMUP=0: the warm-up thread (app/warmup.py) would start kaleido's Chromium beside the rounds
        env = app_env(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name,
                      LENS_SPEECH_CLIPS=str(clips / "list.tsv"), LENS_WARMUP="0")
        result["browser"] = first_picture(env, args.rounds)
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
