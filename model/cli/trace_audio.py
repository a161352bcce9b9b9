"""`trace --audio CLIP` and, for a speech model, `trace --data LIST.tsv --out DIR` over a list of clips
(model.audio.clips: `clip path<TAB>transcript`, paths relative to the list): one Trace per line, `0001.json`, ...
numbered by the line; a line with a transcript is teacher-forced on it (as `--target` is), one without is
decoded. A clip that cannot be read or run is reported by its line number on stderr and the others still traced;
the exit code is 1 when any line failed."""

from __future__ import annotations

import sys
from pathlib import Path

from attention_lens.model.engine import DecodeOptions, Engine, ModelInputError, Trace

FAILED = 1


def describe(trace: Trace) -> str:
    """One line about an audio Trace: the clip's length and positions, the padding band, the rows and tokens."""
    source = trace.source or {}
    padding = source.get("padding")
    band = f" + the padding band {padding['start_s']:.2f}–{padding['end_s']:.2f} s" if padding else ""
    clip = trace.n - (1 if padding else 0)
    return (f"{source.get('duration_s', 0.0):.2f} s of audio: {clip} encoder positions{band}; {trace.m} decoder rows "
            f"(forced {' '.join(trace.forced_tokens) or 'nothing'}) -> {' '.join(trace.target_tokens)}")


def trace_clip(engine: Engine, clip: str, target: str | None, options: DecodeOptions, out: Path) -> int:
    """`trace --audio CLIP --out FILE`: the Trace of one clip, its warnings and a line about it on stderr."""
    trace = engine.trace(audio=clip, target=target, options=options)
    trace.save(out)
    for w in trace.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"wrote {out}: {describe(trace)}", file=sys.stderr)
    return 0


def trace_clips(engine: Engine, data: str, out: Path, options: DecodeOptions) -> int:
    """One Trace per line of a clip list into the folder `out`; bad lines reported on stderr as they come."""
    from attention_lens.model.audio.clips import read_clip_list
    from tqdm import tqdm

    lines = read_clip_list(data)
    width = max(4, len(str(lines[-1].number)))
    out.mkdir(parents=True, exist_ok=True)
    written = failed = 0
    for line in tqdm(lines, desc="tracing", unit="clip", file=sys.stderr, disable=None):
        try:
            if line.error:
                raise ModelInputError(line.error)
            trace = engine.trace(audio=line.path, target=line.transcript or None, options=options)
        except ModelInputError as exc:
            failed += 1
            tqdm.write(f"line {line.number}: error: {exc}", file=sys.stderr)
            continue
        trace.save(out / f"{line.number:0{width}d}.json")
        written += 1
        for w in trace.warnings:
            tqdm.write(f"line {line.number}: warning: {w}", file=sys.stderr)
    print(f"wrote {written} traces to {out}" + (f"; {failed} line(s) failed" if failed else ""), file=sys.stderr)
    return FAILED if failed else 0
