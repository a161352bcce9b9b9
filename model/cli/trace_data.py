"""`trace --data FILE.tsv --out DIR` (docs/formats.md): one trace per input line, `0001.json`, … in DIR
(numbered by the line), read as a stream (model.engine.stream: lines of similar length batched together, memory
bounded, `--shard K/N`), each batch written as it is done, with a progress bar on stderr. A line is
`source[<TAB>target[<TAB>gold]]`; a line with a target is teacher-forced on it, as `--target` is. Bad lines (one
that is not UTF-8 too, with the file and the byte named) are reported by number on stderr as they come and the
good ones still traced; the exit code is 1 when any line failed. `--data -` and `--text -` read standard
input."""

from __future__ import annotations

import sys
from pathlib import Path

from attention_lens.model.engine import DecodeOptions, Engine, ModelInputError
from attention_lens.model.engine.stream import BAR, WINDOW, CorpusStream, Shard, count_lines

FAILED = 1
__all__ = ["BAR", "read_stdin_or", "trace_data"]  # BAR: the progress bar's format (model.engine.stream)


def read_stdin_or(value: str) -> str:
    """`-` is standard input (a trailing newline dropped), anything else the value itself."""
    return sys.stdin.read().rstrip("\r\n") if value == "-" else value


def trace_data(engine: Engine, data: str, out: Path, options: DecodeOptions, batch_size: int,
               shard: Shard | None = None, window: int = WINDOW) -> int:
    """One trace per usable line of `data` (model.engine.stream: read lazily, lines of similar length batched
    together, at most `window` lines held), written as each batch is done; bad lines reported on stderr as they
    come. Returns 1 when any line failed, else 0."""
    from tqdm import tqdm

    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    stream = CorpusStream(data, shard=shard or Shard(), batch_size=batch_size, window=window, need_target=False,
                          strict=False, desc="tracing")
    physical = count_lines(data)
    width = max(4, len(str(physical or 0)))
    out.mkdir(parents=True, exist_ok=True)
    written = failed = 0
    for batch in stream:
        results = engine.trace_batch([x.source for x in batch], [x.target or None for x in batch], options)
        for line, result in zip(batch, results):
            if isinstance(result, ModelInputError):
                failed += 1
                stream.write(f"line {line.number}: error: {result}")
                continue
            result.save(out / f"{line.number:0{width}d}.json")
            written += 1
            for w in result.options.get("warnings", []) if isinstance(result.options, dict) else result.warnings:
                tqdm.write(f"line {line.number}: warning: {w}", file=sys.stderr)
    failed += stream.bad_count
    print(f"wrote {written} traces to {out}" + (f"; {failed} line(s) failed" if failed else ""), file=sys.stderr)
    return FAILED if failed else 0
