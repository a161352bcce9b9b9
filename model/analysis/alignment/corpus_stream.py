"""The sentences `align` reads, in batches of (index, example): a list in memory (`MemoryCorpus`) or a TSV
file, or one shard of it, streamed lazily (`FileCorpus`); their gold links parsed and checked (`check_gold`; a
file's pairs with their gold: `gold_lines`, what every command reads a gold file with), and the check that the
engine's words are the file's (`fits`, `MISFIT`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, Protocol

from attention_lens.model.analysis.alignment.links import Gold, parse_pharaoh
from attention_lens.model.analysis.alignment.words import WordAttention
from attention_lens.model.engine.stream import CorpusStream, Line, Shard, read_lines


class Corpus(Protocol):
    """Sentences to align: batches of (index, example) for the indices `keep` accepts; the indices of the
    sentences with gold links (parsed and checked: ValueError naming the bad one); their source sentences."""

    def batches(self, keep: Callable[[int], bool] | None = None) -> Iterable[list[tuple[int, Any]]]: ...

    def golds(self) -> list[int]: ...

    def gold(self, index: int, item: Any) -> Gold | None: ...

    def sources(self) -> Iterable[str]: ...


def check_gold(text: str, source: str, target: str, what: str) -> Gold:
    """Gold links parsed and checked against the whitespace words of the pair (every link inside the sentence);
    ValueError starting with `what` (where the links were read) otherwise."""
    try:
        gold = parse_pharaoh(text)
        gold.check(len(source.split()), len(target.split()))
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    return gold


def gold_lines(path: str, shard: Shard = Shard()) -> Iterator[tuple[Line, Gold | None]]:
    """Every sentence pair of a file (`shard`'s lines) with its gold links checked (None where it has none),
    lazily: the reader of gold files of every command (align, score-links, aligner, --select-on). ValueError
    naming the file and line for a line that is not UTF-8, a bad column count, or a bad or out-of-sentence link."""
    for line in read_lines(path, shard, strict=True):
        gold = check_gold(line.gold, line.source, line.target, f"{path}, line {line.number}") \
            if line.gold.strip() else None
        yield line, gold


class MemoryCorpus:
    """A list of examples (index = position), in batches sorted by length within windows (model.engine.stream)."""

    def __init__(self, examples: Sequence[Any], batch_size: int = 32, progress: bool = False,
                 what: str = "sentence") -> None:
        self.examples, self.batch_size, self.progress, self.what = examples, batch_size, progress, what

    def batches(self, keep: Callable[[int], bool] | None = None) -> Iterator[list[tuple[int, Any]]]:
        from attention_lens.model.engine.stream import Line, batches
        from tqdm import tqdm

        lines = (Line(k + 1, ex.source, ex.target, ex.gold) for k, ex in enumerate(self.examples)
                 if keep is None or keep(k))
        bar = tqdm(total=len(self.examples), desc="aligning", unit="sent", disable=not self.progress, leave=False)
        for batch in batches(lines, self.batch_size):
            yield [(line.number - 1, line) for line in batch]
            bar.update(len(batch))
        bar.close()

    def golds(self) -> list[int]:
        out = []
        for k, ex in enumerate(self.examples):
            if ex.gold.strip():
                check_gold(ex.gold, ex.source, ex.target, f"{self.what} {k + 1}")
                out.append(k)
        return out

    def gold(self, index: int, item: Any) -> Gold | None:
        return parse_pharaoh(item.gold) if item.gold.strip() else None

    def sources(self) -> Iterator[str]:
        return (ex.source for ex in self.examples)


class _KeptStream(CorpusStream):
    """A CorpusStream of the lines `keep` accepts (by 0-based line index)."""

    def __init__(self, path: str, keep: Callable[[int], bool] | None, **kw: Any) -> None:
        super().__init__(path, **kw)
        self.keep = keep

    def _good(self) -> Iterator[Line]:
        for line in super()._good():
            if self.keep is None or self.keep(line.number - 1):
                yield line


class FileCorpus:
    """A TSV file (or one shard of it) read lazily, for run_alignment: sentence index = 0-based line number."""

    def __init__(self, path: str, shard: Shard, batch_size: int, window: int, progress: bool, limit: int = 0):
        self.path, self.shard, self.batch_size, self.window = path, shard, batch_size, window
        self.progress, self.limit = progress, limit

    def _lines(self) -> Iterator[Line]:
        for k, line in enumerate(read_lines(self.path, self.shard, strict=True)):
            if self.limit and k >= self.limit:
                return
            yield line

    def batches(self, keep: Callable[[int], bool] | None = None) -> Iterator[list[tuple[int, Line]]]:
        limit_keep = keep
        if self.limit:
            last = max((line.number for line in self._lines()), default=0)

            def limit_keep(k: int) -> bool:
                return k < last and (keep is None or keep(k))
        stream = _KeptStream(self.path, limit_keep, shard=self.shard, batch_size=self.batch_size,
                             window=self.window, strict=True, desc="aligning", progress=self.progress)
        for batch in stream:
            yield [(line.number - 1, line) for line in batch]

    def golds(self) -> list[int]:
        out, lines = [], 0
        for line in self._lines():
            lines += 1
            if line.gold.strip():
                check_gold(line.gold, line.source, line.target, f"{self.path}, line {line.number}")
                out.append(line.number - 1)
        if not lines:
            raise ValueError(f"{self.path}: no sentence pairs" + (f" in shard {self.shard}" if self.shard.count > 1
                                                                  else ""))
        return out

    def gold(self, index: int, item: Line):
        return parse_pharaoh(item.gold) if item.gold.strip() else None

    def sources(self) -> Iterator[str]:
        """The whole file's sources (every shard's: a word's frequency band is the same in every shard)."""
        lines = read_lines(self.path, Shard(), strict=True) if not self.limit else self._lines()
        return (line.source for line in lines)



def fits(wa: WordAttention, ex: Any) -> bool:
    """The engine's normalised words are as many as the file's, so gold indices point at the same words."""
    return len(wa.source_words) == len(ex.source.split()) and len(wa.target_words) == len(ex.target.split())


MISFIT = "normalising the sentence changed its number of words, so the gold indices would not match"
