"""`trace --data FILE.tsv --out DIR` (docs/formats.md): one trace per input line, `0001.json`, … in DIR
(numbered by the line), in batches, with a progress bar on stderr. A line is `source[<TAB>target[<TAB>gold]]`;
a line with a target is teacher-forced on it, as `--target` is. Bad lines (one that is not UTF-8 too, with the
file and the byte named) are reported by number on stderr and the good ones still traced; the exit code is 1 when
any line failed. `--data -` and `--text -` read standard input."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from pathlib import Path

from attention_lens.model.corpora.example import parse_line
from attention_lens.model.engine import DecodeOptions, Engine, ModelInputError

FAILED = 1
# tqdm's default bar with the time left spelled out: "tracing  40%|####  | 80/200 [00:02 elapsed, 00:03 left, ...]".
BAR = "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed, {remaining} left, {rate_fmt}]"


def read_stdin_or(value: str) -> str:
    """`-` is standard input (a trailing newline dropped), anything else the value itself."""
    return sys.stdin.read().rstrip("\r\n") if value == "-" else value


def read_lines(data: str) -> list[str | UnicodeDecodeError]:
    """The lines of the file `data` (`-`: standard input), each decoded as UTF-8 on its own: a line that is not
    UTF-8 is its UnicodeDecodeError, so that it is reported by number and the other lines still run."""
    if data == "-":
        stream = getattr(sys.stdin, "buffer", None)
        if stream is None:  # a text stream without bytes underneath (already decoded)
            return sys.stdin.read().splitlines()
        raw = stream.read()
    else:
        with open(data, "rb") as f:
            raw = f.read()
    out: list[str | UnicodeDecodeError] = []
    for line in raw.splitlines():
        try:
            out.append(line.decode("utf-8"))
        except UnicodeDecodeError as exc:
            out.append(exc)
    return out


def parse_lines(lines: Iterable[str | UnicodeDecodeError], name: str = "the input"
                ) -> tuple[list[tuple[int, str, str | None]], list[tuple[int, str]]]:
    """(line number, source, target or None) of each usable line, and (line number, reason) of each bad one;
    blank lines are skipped. A UnicodeDecodeError in place of a line (read_lines) is reported with the file's
    name and the undecodable byte."""
    good, bad = [], []
    for number, line in enumerate(lines, start=1):
        if isinstance(line, UnicodeDecodeError):
            bad.append((number, f"{name}, line {number}: not UTF-8 (byte 0x{line.object[line.start]:02x}, byte "
                                f"{line.start + 1} of the line: {line.reason})"))
            continue
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        try:
            example = parse_line(line, need_target=False)
        except ValueError as exc:
            bad.append((number, str(exc)))
            continue
        good.append((number, example.source, example.target or None))
    return good, bad


def trace_data(engine: Engine, data: str, out: Path, options: DecodeOptions, batch_size: int) -> int:
    from tqdm import tqdm

    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    lines = read_lines(data)
    good, bad = parse_lines(lines, "standard input" if data == "-" else data)
    width = max(4, len(str(len(lines))))
    out.mkdir(parents=True, exist_ok=True)
    written = 0
    with tqdm(total=len(good), desc="tracing", unit="line", file=sys.stderr, bar_format=BAR) as bar:
        for start in range(0, len(good), batch_size):
            chunk = good[start:start + batch_size]
            results = engine.trace_batch([c[1] for c in chunk], [c[2] for c in chunk], options)
            for (number, _, _), result in zip(chunk, results):
                if isinstance(result, ModelInputError):
                    bad.append((number, str(result)))
                    continue
                result.save(out / f"{number:0{width}d}.json")
                written += 1
                for w in result.warnings:
                    tqdm.write(f"line {number}: warning: {w}", file=sys.stderr)
            bar.update(len(chunk))
    for number, reason in sorted(bad):
        print(f"line {number}: error: {reason}", file=sys.stderr)
    print(f"wrote {written} traces to {out}" + (f"; {len(bad)} line(s) failed" if bad else ""), file=sys.stderr)
    return FAILED if bad else 0
