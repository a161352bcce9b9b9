"""`trace --data FILE.tsv --out DIR` (DESIGN.md "More contracts"): one trace per input line, `0001.json`, … in DIR
(numbered by the line), in batches, with a progress bar on stderr. A line is `source[<TAB>target[<TAB>gold]]`;
a line with a target is teacher-forced on it, as `--target` is. Bad lines are reported by number on stderr and
the good ones still traced; the exit code is 1 when any line failed. `--data -` and `--text -` read standard
input."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from model.engine import DecodeOptions, Engine, ModelInputError

FAILED = 1


def read_stdin_or(value: str) -> str:
    """`-` is standard input (a trailing newline dropped), anything else the value itself."""
    return sys.stdin.read().rstrip("\r\n") if value == "-" else value


def parse_lines(lines: Iterable[str]) -> tuple[list[tuple[int, str, str | None]], list[tuple[int, str]]]:
    """(line number, source, target or None) of each usable line, and (line number, reason) of each bad one;
    blank lines are skipped."""
    good, bad = [], []
    for number, line in enumerate(lines, start=1):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) > 3:
            bad.append((number, f"expected source[<TAB>target[<TAB>gold]], got {len(cols)} columns"))
        elif not cols[0].strip():
            bad.append((number, "the source is empty"))
        else:
            target = cols[1] if len(cols) > 1 and cols[1].strip() else None
            good.append((number, cols[0], target))
    return good, bad


def trace_data(engine: Engine, data: str, out: Path, options: DecodeOptions, batch_size: int) -> int:
    from tqdm import tqdm

    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    if data == "-":
        lines = sys.stdin.read().splitlines()
    else:
        with open(data, encoding="utf-8") as f:
            lines = f.read().splitlines()
    good, bad = parse_lines(lines)
    width = max(4, len(str(len(lines))))
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    with tqdm(total=len(good), desc="tracing", unit="line", file=sys.stderr) as bar:
        for start in range(0, len(good), batch_size):
            chunk = good[start:start + batch_size]
            results = engine.trace_batch([c[1] for c in chunk], [c[2] for c in chunk], options)
            for (number, _, _), result in zip(chunk, results):
                if isinstance(result, ModelInputError):
                    bad.append((number, str(result)))
                    continue
                result.save(out / f"{number:0{width}d}.json")
                written += 1
                for w in result.options.get("warnings", []):
                    tqdm.write(f"line {number}: warning: {w}", file=sys.stderr)
            bar.update(len(chunk))
    for number, reason in sorted(bad):
        print(f"line {number}: error: {reason}", file=sys.stderr)
    print(f"wrote {written} traces to {out}" + (f"; {len(bad)} line(s) failed" if bad else ""), file=sys.stderr)
    return FAILED if bad else 0
