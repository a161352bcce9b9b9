"""Corpus files read as a stream: the commands that run a model over a whole file (`eval`, `heads`, `align`,
`trace --data`, ...) read it lazily, line by line, keep only a bounded window of lines, sort that window by
length so that a batch holds sentences of similar length (less padding), and hand out batches. Memory does not
grow with the number of lines: at any time the stream holds at most `window` parsed lines.

- `read_lines(path, shard)`: the numbered lines of a file (`-`: standard input; `.gz` through gzip), lazily,
  each parsed on its own (`Line`) or its reason for being refused (`BadLine`).
- `Shard` ("K/N", K from 1 to N): line number i (1-based, counting every physical line of the file, blank ones
  included) belongs to shard K when (i - 1) mod N == K - 1. Round robin rather than contiguous ranges: a shard
  needs no line count, and long and short lines spread evenly over the shards.
- `batches(lines, ...)`: the bounded-window length bucketing; a batch is at most `batch_size` lines and, when
  `batch_tokens` is given, at most that many padded length units (longest line x lines).
- `CorpusStream`: the above with a progress bar on stderr (rate and time left; the total is counted first, a
  quick pass over the bytes, when the input is a file) and bad lines reported as they come.
- `auto_batch_size(bytes_per_line)`: a batch size from the memory available (CUDA: the device's free memory;
  otherwise MemAvailable of /proc/meminfo).

Batches come out in length order within each window, not in file order: every consumer keys its results by
`Line.number` (a trace file's name, an `index` in JSON) or sums them (counts, losses), so the order of batches
never changes a figure.
"""

from __future__ import annotations

import gzip
import io
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

# tqdm's default bar with the time left spelled out: "tracing  40%|####  | 80/200 [00:02 elapsed, 00:03 left, ...]".
BAR = "{desc} {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} [{elapsed} elapsed, {remaining} left, {rate_fmt}]"
BAR_NO_TOTAL = "{desc} {n_fmt} [{elapsed} elapsed, {rate_fmt}]"
WINDOW = 2048  # lines held at once for length bucketing
MAX_AUTO_BATCH = 256


@dataclass(frozen=True)
class Shard:
    """Shard `index` of `count` (1 <= index <= count): the lines whose number i has (i - 1) % count == index - 1."""

    index: int = 1
    count: int = 1

    @classmethod
    def parse(cls, text: str | None) -> Shard:
        """"K/N" -> Shard(K, N); None or "" -> the whole file. ValueError, one line, for anything else."""
        if not text:
            return cls()
        k, sep, n = text.partition("/")
        if not (sep and k.strip().isdigit() and n.strip().isdigit()) or not 1 <= int(k) <= int(n):
            raise ValueError(f"--shard is K/N with 1 <= K <= N (shard K of N, e.g. 2/8), not {text!r}")
        return cls(int(k), int(n))

    def holds(self, number: int) -> bool:
        """Whether 1-based line `number` belongs to this shard."""
        return (number - 1) % self.count == self.index - 1

    def share(self, lines: int) -> int:
        """How many of line numbers 1..lines belong to this shard."""
        return len(range(self.index - 1, lines, self.count))

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


@dataclass(frozen=True)
class Line:
    """One usable line: its 1-based number in the file, the source, the target ("" when the line has none) and
    the gold links ("" when none)."""

    number: int
    source: str
    target: str = ""
    gold: str = ""


@dataclass(frozen=True)
class BadLine:
    number: int
    reason: str


def _open_bytes(path: str | bytes) -> Any:
    if isinstance(path, bytes):  # a file already in memory (an upload): read as a stream all the same
        return io.BytesIO(path)
    if path == "-":
        return getattr(sys.stdin, "buffer", None) or io.BytesIO(sys.stdin.read().encode("utf-8"))
    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    return gzip.open(path, "rb") if str(path).endswith(".gz") else open(path, "rb")


def count_lines(path: str | bytes) -> int | None:
    """Physical lines of a file (a last line without its line break counted), read in 1 MiB blocks; None for
    standard input (it can be read once only)."""
    if path == "-":
        return None
    n, last = 0, b"\n"
    with _open_bytes(path) as f:
        while block := f.read(1 << 20):
            n += block.count(b"\n")
            last = block[-1:]
    return n + (last != b"\n")


def read_lines(path: str | bytes, shard: Shard = Shard(), need_target: bool = True, strict: bool = False
               ) -> Iterator[Line | BadLine]:
    """The lines of `path` (a file name, `-`, or a file's bytes already in memory) that `shard` holds, lazily:
    blank lines skipped, each other line a Line or, when parse_line refuses it or it is not UTF-8, a BadLine with
    the reason (strict: ValueError naming the file and line instead, as model.corpora.read_tsv does)."""
    from attention_lens.model.corpora.example import decode_line, parse_line

    name = "the upload" if isinstance(path, bytes) else "standard input" if path == "-" else path
    f = _open_bytes(path)
    try:
        for number, raw in enumerate(f, start=1):
            if not shard.holds(number):
                continue
            try:
                text = decode_line(raw, name, number).rstrip("\r\n")
            except ValueError as exc:
                if strict:
                    raise
                yield BadLine(number, str(exc))
                continue
            if not text.strip():
                continue
            try:
                ex = parse_line(text, need_target=need_target)
            except ValueError as exc:
                if strict:
                    raise ValueError(f"{name}:{number}: {exc}: {text[:80]!r}") from None
                yield BadLine(number, str(exc))
                continue
            yield Line(number, ex.source, ex.target, ex.gold)
    finally:
        if f is not getattr(sys.stdin, "buffer", None):
            f.close()


def default_length(line: Line) -> int:
    """The bucketing key: characters of source and target (a cheap stand-in for their token counts)."""
    return len(line.source) + len(line.target)


def batches(lines: Iterable[Line], batch_size: int, batch_tokens: int | None = None, window: int = WINDOW,
            length: Callable[[Line], int] = default_length) -> Iterator[list[Line]]:
    """Batches of at most batch_size lines (and, with batch_tokens, at most batch_tokens units of
    max(length) x lines; a line longer than that goes alone): `window` lines are read, sorted by length and cut
    into batches; then the next window. At most `window` lines are held at once."""
    if batch_size < 1:
        raise ValueError("--batch-size must be at least 1")
    if batch_tokens is not None and batch_tokens < 1:
        raise ValueError("--batch-tokens must be at least 1")
    window = max(window, batch_size)
    held: list[Line] = []

    def flush() -> Iterator[list[Line]]:
        held.sort(key=length)
        batch: list[Line] = []
        longest = 0
        for line in held:
            size = length(line)
            grown = max(longest, size) * (len(batch) + 1)
            if batch and (len(batch) >= batch_size or (batch_tokens is not None and grown > batch_tokens)):
                yield batch
                batch, longest = [], 0
            batch.append(line)
            longest = max(longest, size)
        if batch:
            yield batch
        held.clear()

    for line in lines:
        held.append(line)
        if len(held) >= window:
            yield from flush()
    yield from flush()


def available_memory(device: str | None = None) -> int:
    """Bytes free for a batch: a CUDA device's free memory, else the machine's MemAvailable (/proc/meminfo),
    else 2 GiB when neither can be read."""
    if device and device.startswith("cuda"):
        import torch

        if torch.cuda.is_available():
            return int(torch.cuda.mem_get_info(torch.device(device))[0])
    try:
        with open("/proc/meminfo") as f:
            for row in f:
                if row.startswith("MemAvailable:"):
                    return int(row.split()[1]) * 1024
    except OSError:
        pass
    return 2 << 30


def auto_batch_size(bytes_per_line: int, device: str | None = None, share: float = 0.25,
                    cap: int = MAX_AUTO_BATCH) -> int:
    """Lines per batch so that a batch takes at most `share` of the memory available (available_memory), between
    1 and cap."""
    return max(1, min(cap, int(available_memory(device) * share) // max(bytes_per_line, 1)))


def attention_bytes_per_line(n_layers: int, n_heads: int, tokens: int, need_weights: bool, d_model: int = 512,
                             vocab: int = 32000) -> int:
    """A rough upper bound of what one line of `tokens` source and target tokens costs in a batched pass, float32:
    the logits (tokens x vocab), the activations, and with weights every layer's three attention kinds."""
    per = tokens * vocab + 8 * n_layers * tokens * d_model
    if need_weights:
        per += 3 * n_layers * n_heads * tokens * tokens
    return 4 * per


class CorpusStream:
    """A file's lines of one shard in length-bucketed batches, with a progress bar on stderr counting lines
    (rate and time left) and bad lines written to stderr as they come (`bad` keeps their count and the first
    100 of them). Iterate it for the batches (lists of Line).

    strict: a bad line stops the stream with a ValueError naming it (the metric commands: a figure over part of
    a file must not pass for one over the whole file); otherwise it is reported and skipped (trace --data)."""

    KEEP_BAD = 100

    def __init__(self, path: str, *, shard: Shard = Shard(), batch_size: int = 32, batch_tokens: int | None = None,
                 window: int = WINDOW, need_target: bool = True, strict: bool = True, desc: str = "lines",
                 progress: bool = True, length: Callable[[Line], int] = default_length) -> None:
        self.path, self.shard, self.batch_size, self.batch_tokens = path, shard, batch_size, batch_tokens
        self.window, self.need_target, self.strict, self.desc = window, need_target, strict, desc
        self.progress, self.length = progress, length
        self.bad: list[BadLine] = []
        self.bad_count = 0
        self.lines = 0  # usable lines handed out so far
        self.physical: int | None = None  # the file's physical lines (once counted)
        self._bar: Any = None

    def _good(self) -> Iterator[Line]:
        for item in read_lines(self.path, self.shard, self.need_target, self.strict):
            if isinstance(item, BadLine):
                self.report_bad(item)
                continue
            yield item

    def report_bad(self, bad: BadLine) -> None:
        """Count a bad line, keep it among the first KEEP_BAD, write it to stderr now and move the bar past it."""
        self.bad_count += 1
        if len(self.bad) < self.KEEP_BAD:
            self.bad.append(bad)
        self.write(f"line {bad.number}: error: {bad.reason}")
        if self._bar is not None:
            self._bar.update(1)

    def write(self, message: str) -> None:
        """A line on stderr that does not break the progress bar."""
        from tqdm import tqdm

        if self._bar is not None:
            tqdm.write(message, file=sys.stderr)
        else:
            print(message, file=sys.stderr)

    def __iter__(self) -> Iterator[list[Line]]:
        from tqdm import tqdm

        physical = count_lines(self.path)
        self.physical = physical
        total = self.shard.share(physical) if physical is not None else None
        self._bar = tqdm(total=total, desc=self.desc, unit="line", file=sys.stderr, disable=not self.progress,
                         bar_format=BAR if total is not None else BAR_NO_TOTAL, dynamic_ncols=True)
        try:
            for batch in batches(self._good(), self.batch_size, self.batch_tokens, self.window, self.length):
                self.lines += len(batch)
                yield batch
                self._bar.update(len(batch))
            if total is not None:  # blank lines were skipped, not counted: close the bar at its total
                self._bar.n = total
                self._bar.refresh()
        finally:
            self._bar.close()
            self._bar = None


def add_stream_options(p: Any, batch_default: int | None = None) -> None:
    """--shard K/N, --batch-size N (default: chosen from the memory available, or batch_default) and
    --window N, the options every streaming corpus command takes."""
    p.add_argument("--shard", metavar="K/N", help="run only shard K of N (1 <= K <= N): the lines whose number i "
                   "has (i - 1) mod N == K - 1; merge the N outputs with `merge`")
    p.add_argument("--batch-size", type=int, default=batch_default,
                   help="sentences per batched pass" + (f" (default {batch_default})" if batch_default else
                                                         " (default: chosen from the memory available)"))
    p.add_argument("--window", type=int, default=WINDOW,
                   help=f"lines read ahead and sorted by length before batching (default {WINDOW}); memory "
                        "grows with this, not with the file")
