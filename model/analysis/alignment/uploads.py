"""A user's test file on the Alignment page: `source<TAB>target[<TAB>gold]` lines checked one by one, then the whole
file read as a stream (model.engine.stream: length-bucketed batches within a bounded window, the attention-only pass
of sentence_attention.align_batches), every method counted on every sentence as it passes. Kept per sentence: where
its line starts and, for a sentence with gold, its counts of every method (in a temporary file); kept for the file:
the tally of every method, the error breakdown and the heads' agreement of every method (upload_counts). No
sentence's attention is kept: the page recomputes the one sentence it opens (`UploadReport.attention`), and the
download's links come from a second pass (`UploadReport.links_by_line`)."""

from __future__ import annotations

import re
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import WordStats
from attention_lens.model.analysis.alignment.corpus_stream import MISFIT
from attention_lens.model.analysis.alignment.links import Gold, format_pharaoh, parse_pharaoh
from attention_lens.model.analysis.alignment.methods import SEARCH_THRESHOLDS, Method
from attention_lens.model.analysis.alignment.report import SentenceScore
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.sentence_attention import Aligned, align_batches
from attention_lens.model.analysis.alignment.sentences import LinkSpill
from attention_lens.model.analysis.alignment.upload_counts import (
    BlockSpill,
    HeadAgreement,
    MethodBreakdowns,
    every_mask,
)
from attention_lens.model.analysis.alignment.words import READINGS, WordAttention, pooling
from attention_lens.model.corpora import Example
from attention_lens.model.corpora.example import parse_line
from attention_lens.model.engine.stream import WINDOW, Line, batches, read_lines

BATCH = 32  # sentences per batched pass
KEEP_SKIPPED = 100  # reasons kept for sentences that could not be aligned (all are counted)
MAX_ERRORS = 8  # problems listed at once; the count of the rest is given
PHARAOH = re.compile(r"\s*\d+[-?]\d+(\s+\d+[-?]\d+)*\s*")  # a column of gold links, `0-0 1-2 3?3`


def line_problem(example: Example) -> str | None:
    """Why a parsed line cannot be used (its gold column is not Pharaoh links that fit its words, or its second
    column holds links where the target belongs), or None."""
    if not example.gold.strip() and PHARAOH.fullmatch(example.target):
        return (f"the second column holds gold links ({example.target[:24]}), not a target sentence: a line is "
                f"source<TAB>target<TAB>gold")
    if example.gold.strip():
        try:
            parse_pharaoh(example.gold).check(len(example.source.split()), len(example.target.split()))
        except ValueError as exc:
            return f"gold links: {exc}"
    return None


def parse_tsv(text: str, max_lines: int | None = None) -> tuple[list[Example], list[str]]:
    """(examples, problems): every problem names its line (1-based, blank lines counted but skipped). Any
    problem means the file is not used, so that no sentence is scored against a misread gold. `max_lines`: more
    sentences than that is a problem too."""
    examples, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            example = parse_line(line)
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        reason = line_problem(example)
        if reason:
            problems.append(f"line {number}: {reason}")
            continue
        examples.append(example)
    if max_lines is not None and len(examples) > max_lines:
        problems.append(f"the file has {len(examples)} sentences; at most {max_lines} are read here")
    if not examples and not problems:
        problems.append("the file has no sentence")
    return examples, problems


def shown_problems(problems: Sequence[str]) -> str:
    more = len(problems) - MAX_ERRORS
    return "\n".join(f"- {p}" for p in problems[:MAX_ERRORS]) + (f"\n- … and {more} more" if more > 0 else "")


@dataclass
class UploadReport:
    """A checked file aligned by every method, read as a stream. Sentences are named by their 0-based line of the
    file (`lines`, in file order; `offsets`: where each line starts in `data`). Kept per sentence: a few integers;
    per method: its tally, breakdown and the heads' agreement."""

    data: bytes
    lines: np.ndarray  # (N,) 0-based line number of every sentence (non-blank line), in file order
    offsets: np.ndarray  # (N,) byte offset of each of those lines in `data`
    aligned: np.ndarray  # (N,) bool: the sentence could be aligned
    tally: Tally | None  # every method, over the sentences with gold (None: no sentence with gold aligned)
    blocks: BlockSpill  # per sentence with gold (line numbers in blocks.ids): every method's counts
    breakdowns: MethodBreakdowns
    agreement_counts: HeadAgreement
    skipped: dict[int, str] = field(default_factory=dict)  # line -> why it was not aligned (the first KEEP_SKIPPED)
    n_skipped: int = 0
    n_gold: int = 0  # sentences with gold links (aligned or not)
    stats: WordStats | None = None
    seconds: float = 0.0  # the alignment pass, wall clock

    @property
    def n(self) -> int:
        return len(self.lines)

    @property
    def n_aligned(self) -> int:
        return int(self.aligned.sum())

    def _row(self, line: int) -> int:
        k = int(np.searchsorted(self.lines, line))
        if k >= len(self.lines) or self.lines[k] != line:
            raise KeyError(f"line {line + 1} of the file is not a sentence pair")
        return k

    def example(self, line: int) -> Example:
        """The pair on 0-based line `line` of the file, read again from the file's bytes."""
        start = int(self.offsets[self._row(line)])
        end = self.data.find(b"\n", start)
        return parse_line(self.data[start:end if end >= 0 else len(self.data)].decode("utf-8").rstrip("\r"))

    def aligned_lines(self, limit: int | None = None) -> list[int]:
        """0-based lines of the sentences that could be aligned, in file order (the first `limit`)."""
        return [int(x) for x in self.lines[self.aligned][:limit]]

    def gold(self, line: int) -> Gold | None:
        ex = self.example(line)
        return parse_pharaoh(ex.gold) if ex.gold.strip() else None

    def counts(self, method: Method) -> np.ndarray:
        """(N_gold, 6) int64 of every aligned sentence with gold under `method`: line, |S|, |P|, |A|, |A & S|,
        |A & P|, in file order."""
        if self.tally is None:
            return np.zeros((0, 6), dtype=np.int64)
        c = self.blocks.column(self.tally.index[method.name])
        ids = np.frombuffer(self.blocks.ids, dtype=np.int64)
        possible = np.frombuffer(self.blocks.possible, dtype=np.int64)
        return np.stack([ids, c[:, 1], possible, c[:, 0], c[:, 2], c[:, 3]], axis=1)

    def sentences(self, method: Method) -> list[SentenceScore]:
        """Every aligned sentence with gold, its counts under `method` (index: its 0-based line)."""
        return [SentenceScore(*(int(x) for x in row)) for row in self.counts(method)]

    def breakdown(self, method: Method) -> dict:
        """`breakdown`, `omissions` and `sinks` of `method` over the file (breakdown.Breakdown's summary)."""
        if self.tally is None or method.name not in self.tally.index:
            raise ValueError(f"{method.name} was not counted (thresholds counted: {SEARCH_THRESHOLDS})")
        return self.breakdowns.of(self.tally.index[method.name]).summary()

    @property
    def best_method(self) -> Method | None:
        return self.tally.best() if self.tally else None

    def best_head(self) -> Method | None:
        """The single head (any extraction and reading) with the lowest AER."""
        if self.tally is None:
            return None
        heads = [m for m in self.tally.methods if m.head is not None]
        return min(heads, key=lambda m: self.tally[m].aer)

    def agreement(self, method: Method, layers: int, heads: int) -> np.ndarray:
        """(layers*heads, layers*heads) agreement between every two heads read with `method`'s extraction and
        reading: 2|A & B| / (|A| + |B|) over all sentences, i.e. 1 - AER of one head against the other taken
        as sure gold (symmetric; 1 on the diagonal)."""
        if layers * heads != self.agreement_counts.heads:
            raise ValueError(f"the file was aligned with {self.agreement_counts.heads} heads, not {layers * heads}")
        extractions = ["argmax", "inter", "union", *(f"threshold{t:g}" for t in SEARCH_THRESHOLDS)]
        name = f"threshold{method.threshold:g}" if method.extract == "threshold" else method.extract
        if name not in extractions:
            raise ValueError(f"{name} was not counted (thresholds counted: {SEARCH_THRESHOLDS})")
        return self.agreement_counts.matrix(extractions.index(name), READINGS.index(method.reading))

    def attention(self, engine, line: int) -> WordAttention | None:
        """The word attention of the sentence on 0-based line `line`, computed again (nothing of it is kept), on
        the file's own words; None when it cannot be aligned."""
        ex = self.example(line)
        item = next(align_batches(engine, [[(line, Line(line + 1, ex.source, ex.target, ex.gold))]]))
        return own_words(item, ex)[0]

    def links_by_line(self, engine, method: Method, progress: Callable[[int, int], None] | None = None) -> str:
        """The predicted links as Pharaoh, one line per line of the file (line n of the download is line n of
        the upload): a blank line, or a sentence that could not be aligned, gives an empty line. A second pass
        over the file (the links are not kept); progress(done, total) after each batch."""
        spill = LinkSpill()
        try:
            for _, item, wa in stream_aligned(engine, self.data, progress=progress, total=self.n):
                if wa is not None:
                    spill.add(item.index, format_pharaoh(method.links(wa)))
            found = dict(spill.in_order())
        finally:
            spill.close()
        physical = self.data.count(b"\n") + (not self.data.endswith(b"\n") and len(self.data) > 0)
        return "".join(f"{found.get(k, '')}\n" for k in range(physical))

    def pharaoh(self, engine, method: Method) -> str:
        """One line per sentence of the file, in order: the method's links (an empty line where the sentence
        could not be aligned)."""
        by_line = self.links_by_line(engine, method).split("\n")
        return "".join(f"{by_line[int(k)]}\n" for k in self.lines)

    def nbytes(self) -> int:
        """Bytes this report holds in memory besides the file's own bytes (the per-method counts of every
        sentence are in a temporary file)."""
        arrays = self.lines.nbytes + self.offsets.nbytes + self.aligned.nbytes
        spilled = len(self.blocks.ids) * 16
        tally = self.tally.counts.nbytes if self.tally is not None else 0
        return (arrays + spilled + tally + self.breakdowns.nbytes() + self.agreement_counts.shared.nbytes
                + 200 * len(self.skipped))


def progress_text(done: int, total: int, seconds: float) -> str:
    """'2,300 of 5,000 sentences · 410 a second · 7 s left' (the rate and time left once some are done)."""
    out = f"{done:,} of {total:,} sentences"
    if done and seconds > 0:
        rate = done / seconds
        left = max(total - done, 0) / rate
        out += f" · {rate:,.0f} a second · {left:,.0f} s left"
    return out


def word_map(normalised: Sequence[str], original: str) -> list[int] | None:
    """For each normalised word, the index of the whitespace word of `original` it came from, or None when the
    normalisation changed more than case and spacing (a character not found in order). Normalising splits
    punctuation off and lowercases ("mat." -> "mat", "."), so every normalised character is found, in
    order, in the casefolded original."""
    words = original.split()
    chars = [(c, w) for w, word in enumerate(words) for c in word.casefold()]
    out, at = [], 0
    for token in normalised:
        first = None
        for c in token.casefold():
            while at < len(chars) and chars[at][0] != c:
                at += 1
            if at == len(chars):
                return None
            first = chars[at][1] if first is None else first
            at += 1
        if first is None:
            return None
        out.append(first)
    return out if set(out) == set(range(len(words))) else None


def on_own_words(wa: WordAttention, ex: Example) -> WordAttention | None:
    """wa (over the engine's normalised words) regrouped onto the file's own whitespace words: a source word's
    column is the sum of its parts' (attention it received), a target word's row the mean of its parts' rows;
    None when the words cannot be matched (word_map)."""
    src, tgt = word_map(wa.source_words, ex.source), word_map(wa.target_words, ex.target)
    if src is None or tgt is None:
        return None
    n, m = len(ex.source.split()), len(ex.target.split())
    keys = pooling([[i for i, w in enumerate(src) if w == k] for k in range(n)], len(src), mean=False).T
    rows = pooling([[i for i, w in enumerate(tgt) if w == k] for k in range(m)], len(tgt), mean=True)
    return WordAttention(tuple(ex.source.split()), tuple(ex.target.split()), rows @ wa.plain @ keys,
                         rows @ wa.shift @ keys)


def own_words(item: Aligned, ex) -> tuple[WordAttention | None, str]:
    """(word attention on the file's own whitespace words, or None and why not)."""
    wa = item.attention
    if wa is not None and (len(wa.source_words), len(wa.target_words)) != (len(ex.source.split()),
                                                                           len(ex.target.split())):
        wa = on_own_words(wa, ex)  # natural text ("mat." became "mat ."): aligned on the file's own words
        if wa is None:
            return None, MISFIT
    return wa, item.error


def _lines(data: bytes) -> Iterator[Line]:
    """The file's usable lines, 1-based numbers (the check found no problem: a bad line is skipped here)."""
    for item in read_lines(data):
        if isinstance(item, Line):
            yield item


def stream_aligned(engine, data: bytes, batch_size: int = BATCH, window: int = WINDOW,
                   progress: Callable[[int, int], None] | None = None, total: int = 0
                   ) -> Iterator[tuple[Line, Aligned, WordAttention | None]]:
    """Every sentence of the file aligned, in length-bucketed batches (model.engine.stream.batches: not in file
    order): (its line, the engine's Aligned with index = its 0-based line, its word attention on the file's own
    words or None). progress(done, total) after each batch."""
    done = 0
    for batch in batches(_lines(data), batch_size, window=window):
        by_index = {line.number - 1: line for line in batch}
        for item in align_batches(engine, [list(by_index.items())]):
            line = by_index[item.index]
            wa, _ = own_words(item, line)
            yield line, item, wa
        done += len(batch)
        if progress is not None:
            progress(done, total)


def scan(data: bytes) -> tuple[np.ndarray, np.ndarray, int, Counter]:
    """(0-based line numbers of the usable lines, their byte offsets, how many have gold, the file's source word
    counts) in one read of the bytes."""
    lines, offsets = array("q"), array("q")
    gold = 0
    words: Counter = Counter()
    at = 0
    for number, raw in enumerate(data.splitlines(keepends=True)):
        text = raw.decode("utf-8", errors="replace").rstrip("\r\n")
        if text.strip():
            try:
                ex = parse_line(text)
            except ValueError:
                ex = None
            if ex is not None:
                lines.append(number)
                offsets.append(at)
                gold += bool(ex.gold.strip())
                words.update(w.casefold() for w in ex.source.split())
        at += len(raw)
    return (np.frombuffer(lines, dtype=np.int64).copy() if lines else np.zeros(0, np.int64),
            np.frombuffer(offsets, dtype=np.int64).copy() if offsets else np.zeros(0, np.int64), gold, words)


def as_bytes(data: bytes | str | Sequence[Example]) -> bytes:
    """An upload's bytes; text or examples (tests, the shipped split) written as the file they would be."""
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        return data.encode("utf-8")
    return "".join(f"{ex.source}\t{ex.target}" + (f"\t{ex.gold}" if ex.gold else "") + "\n"
                   for ex in data).encode("utf-8")


def align_upload(engine, data: bytes | str | Sequence[Example], batch_size: int = BATCH, window: int = WINDOW,
                 progress: Callable[[int, int], None] | None = None) -> UploadReport:
    """Teacher-force every sentence of a checked file (as the model was trained) as a stream, and count every
    method on each as it passes (on the sentences with gold: the tally, each sentence's counts, the breakdown;
    on all: omissions, sinks, the heads' agreement). progress(sentences done, sentences) after each batch."""
    started = time.perf_counter()
    data = as_bytes(data)
    lines, offsets, n_gold, words = scan(data)
    counts = engine.source_word_counts()
    stats = WordStats.of(counts, "training") if counts else WordStats.of(words, "file")
    del words
    tally = Tally(engine.n_decoder_layers, engine.n_heads)
    readings = np.array([READINGS.index(m.reading) for m in tally.methods])
    breakdowns = MethodBreakdowns(stats, len(tally.methods), readings)
    agreement = HeadAgreement(3 + len(tally.thresholds), engine.n_decoder_layers * engine.n_heads)
    blocks = BlockSpill(len(tally.methods))
    aligned = np.zeros(len(lines), dtype=bool)
    skipped: dict[int, str] = {}
    n_skipped = 0
    for line, item, wa in stream_aligned(engine, data, batch_size, window, progress, len(lines)):
        k = int(np.searchsorted(lines, item.index))
        if wa is None:
            n_skipped += 1
            if len(skipped) < KEEP_SKIPPED:
                skipped[item.index] = item.error or MISFIT
            continue
        aligned[k] = True
        masks = every_mask(wa, tally.thresholds)  # (E, R, S, m, n)
        agreement.add(masks)
        gold = parse_pharaoh(line.gold) if line.gold.strip() else None
        sure = possible = None
        if gold is not None:
            sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
        pieces = item.pieces if len(item.pieces) == len(wa.source_words) else ()
        block = breakdowns.add(wa, masks.reshape(-1, *masks.shape[-2:]), pieces, sure, possible)
        if item.sinks is not None:
            breakdowns.add_sinks(item.sinks, item.rows)
        if block is not None:
            tally.add_block(block)
            blocks.add(item.index, block, len(gold.possible))
    # the spill holds sentences in the order they were aligned (length order): put them in file order
    blocks = _in_file_order(blocks)
    return UploadReport(data, lines, offsets, aligned, tally if tally.n else None, blocks, breakdowns, agreement,
                        skipped, n_skipped, n_gold, stats, time.perf_counter() - started)


def _in_file_order(spill: BlockSpill) -> BlockSpill:
    """The same blocks, rewritten in line order (a slab of sentences at a time)."""
    ids = np.frombuffer(spill.ids, dtype=np.int64)
    if not len(ids) or bool(np.all(np.diff(ids) > 0)):
        return spill
    order = np.argsort(ids, kind="stable")
    out = BlockSpill(spill.methods)
    size = spill.methods * 4 * 4
    spill.file.flush()
    for k in order:
        spill.file.seek(int(k) * size)
        block = np.frombuffer(spill.file.read(size), dtype=np.int32).reshape(spill.methods, 4)
        out.add(int(ids[k]), block, spill.possible[int(k)])
    spill.close()
    return out
