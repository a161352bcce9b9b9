"""A user's test file on the Alignment page: `source<TAB>target[<TAB>gold]` lines checked one by one, every
sentence aligned with every method, the heads ranked by AER when there is gold, how much the heads agree with
each other when there is none, and the predicted links written back as Pharaoh lines."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
from attention_lens.model.analysis.alignment.aligned import align_corpus
from attention_lens.model.analysis.alignment.breakdown import Breakdown, WordStats
from attention_lens.model.analysis.alignment.corpus_stream import MISFIT
from attention_lens.model.analysis.alignment.links import Gold, Link, format_pharaoh, parse_pharaoh
from attention_lens.model.analysis.alignment.methods import Method, extract
from attention_lens.model.analysis.alignment.report import SentenceScore
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.words import WordAttention, pooling
from attention_lens.model.corpora import Example
from attention_lens.model.corpora.example import parse_line

MAX_LINES = 5000  # per-sentence counts and the breakdown of 5,000 lines come back within 30 s (docs)
MAX_ERRORS = 8  # problems listed at once; the count of the rest is given
PHARAOH = re.compile(r"\s*\d+[-?]\d+(\s+\d+[-?]\d+)*\s*")  # a column of gold links, `0-0 1-2 3?3`


def parse_tsv(text: str, max_lines: int = MAX_LINES) -> tuple[list[Example], list[str]]:
    """(examples, problems): every problem names its line (1-based, blank lines counted but skipped). Any
    problem means the file is not used, so that no sentence is scored against a misread gold."""
    examples, problems = [], []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            example = parse_line(line)
        except ValueError as exc:
            problems.append(f"line {number}: {exc}")
            continue
        if not example.gold.strip() and PHARAOH.fullmatch(example.target):
            problems.append(f"line {number}: the second column holds gold links ({example.target[:24]}), not a target "
                            f"sentence: a line is source<TAB>target<TAB>gold")
            continue
        if example.gold.strip():
            try:
                parse_pharaoh(example.gold).check(len(example.source.split()), len(example.target.split()))
            except ValueError as exc:
                problems.append(f"line {number}: gold links: {exc}")
                continue
        examples.append(example)
    if len(examples) > max_lines:
        problems.append(f"the file has {len(examples)} sentences; this page reads at most {max_lines} (python -m "
                        f"model align --data FILE.tsv reads a file of any length)")
    if not examples and not problems:
        problems.append("the file has no sentence")
    return examples, problems


def shown_problems(problems: Sequence[str]) -> str:
    more = len(problems) - MAX_ERRORS
    return "\n".join(f"- {p}" for p in problems[:MAX_ERRORS]) + (f"\n- … and {more} more" if more > 0 else "")


@dataclass
class UploadReport:
    """Every sentence of the file aligned: the word attention of those that could be, the tally of those with
    gold links (None without gold), and why the others could not."""

    examples: list[Example]
    attention: dict[int, WordAttention]
    golds: dict[int, Gold]
    tally: Tally | None
    skipped: dict[int, str] = field(default_factory=dict)
    blocks: dict[int, np.ndarray] = field(default_factory=dict)  # per sentence with gold: every method's counts
    pieces: dict[int, tuple[int, ...]] = field(default_factory=dict)  # subword pieces of each source word
    sinks: dict[int, tuple[np.ndarray, int]] = field(default_factory=dict)  # (2, L, h) mass, rows
    stats: WordStats | None = None

    def sentences(self, method: Method) -> list[SentenceScore]:
        """Every sentence with gold, its counts under `method` (from the blocks: no link extracted again)."""
        if self.tally is None:
            return []
        column = self.tally.index[method.name]
        return [SentenceScore(k, int(b[column, 1]), len(self.golds[k].possible), int(b[column, 0]),
                              int(b[column, 2]), int(b[column, 3])) for k, b in sorted(self.blocks.items())]

    def breakdown(self, method: Method) -> dict:
        """`breakdown`, `omissions` and `sinks` of `method` over the file (breakdown.Breakdown)."""
        analysis = Breakdown(self.stats or WordStats.from_sources(ex.source for ex in self.examples))
        for k, wa in self.attention.items():
            mask = extract(wa.matrix(method.reading, method.layer, method.head), method.extract, method.threshold)
            analysis.add_omissions(wa.source_words, mask, wa.matrix(method.reading, None, None).sum(axis=0))
            if k in self.sinks:
                analysis.add_sinks(*self.sinks[k])
            gold = self.golds.get(k)
            if gold is not None:
                sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
                analysis.add_links(wa.source_words, self.pieces.get(k, ()), mask, sure, possible)
        return analysis.summary()

    @property
    def best_method(self) -> Method | None:
        return self.tally.best() if self.tally else None

    def best_head(self) -> Method | None:
        """The single head (any extraction and reading) with the lowest AER."""
        if self.tally is None:
            return None
        heads = [m for m in self.tally.methods if m.head is not None]
        return min(heads, key=lambda m: self.tally[m].aer)

    def links(self, method: Method) -> dict[int, list[Link]]:
        return {k: method.links(wa) for k, wa in self.attention.items()}

    def pharaoh(self, method: Method) -> str:
        """One line per sentence of the file, in order: the method's links (an empty line where the sentence
        could not be aligned)."""
        links = self.links(method)
        return "".join(f"{format_pharaoh(links.get(k, []))}\n" for k in range(len(self.examples)))

    def agreement(self, method: Method, layers: int, heads: int) -> np.ndarray:
        """(layers*heads, layers*heads) agreement between every two heads read with `method`'s extraction and
        reading: 2|A & B| / (|A| + |B|) over all sentences, i.e. 1 - AER of one head against the other taken
        as sure gold (symmetric; 1 on the diagonal)."""
        picks = [Method(method.extract, method.reading, li, hi, method.threshold)
                 for li in range(1, layers + 1) for hi in range(1, heads + 1)]
        sets = [[set(p.links(wa)) for wa in self.attention.values()] for p in picks]
        out = np.ones((len(picks), len(picks)))
        for a in range(len(picks)):
            for b in range(a + 1, len(picks)):
                both = sum(len(x & y) for x, y in zip(sets[a], sets[b]))
                total = sum(len(x) + len(y) for x, y in zip(sets[a], sets[b]))
                out[a, b] = out[b, a] = 2 * both / total if total else 1.0
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


def align_upload(engine, examples: Sequence[Example]) -> UploadReport:
    """Teacher-force every sentence (as the model was trained) and count every method on those with gold."""
    golds = {k: parse_pharaoh(ex.gold) for k, ex in enumerate(examples) if ex.gold}
    tally = Tally(engine.n_decoder_layers, engine.n_heads) if golds else None
    attention, skipped = {}, {}
    blocks, pieces, sinks = {}, {}, {}
    for item in align_corpus(engine, examples, progress=False):
        ex = examples[item.index]
        wa = item.attention
        if wa is not None and (len(wa.source_words), len(wa.target_words)) != (len(ex.source.split()),
                                                                               len(ex.target.split())):
            wa = on_own_words(wa, ex)  # natural text ("mat." became "mat ."): aligned on the file's own words
        if wa is None:
            skipped[item.index] = item.error or MISFIT
            continue
        attention[item.index] = wa = wa.compact()  # float32: every count and link of the page reads this
        if item.sinks is not None:
            sinks[item.index] = (item.sinks, item.rows)
        if len(item.pieces) == len(wa.source_words):
            pieces[item.index] = item.pieces
        if tally is not None and item.index in golds:
            blocks[item.index] = tally.add(wa, golds[item.index]).astype(np.int32)
    if tally is not None and tally.n == 0:
        tally = None
    counts = engine.source_word_counts()
    stats = WordStats.of(counts, "training") if counts else WordStats.from_sources(ex.source for ex in examples)
    return UploadReport(list(examples), attention, golds, tally, skipped, blocks, pieces, sinks, stats)

