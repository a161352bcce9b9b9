"""Any aligner's links scored with the same code as the heads: a Pharaoh links file (one line per line of the
gold file, `i-j` source-target, 0-based, as eflomal, fast_align, awesome-align and GIZA++ write them; `i?j` read as
a link too) against the gold column, per sentence and broken down, and, beside it, a model's method on the same
sentences with where the two disagree."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import Breakdown, WordStats
from attention_lens.model.analysis.alignment.links import Link, count, parse_pharaoh
from attention_lens.model.analysis.alignment.report import SentenceScore, summed
from attention_lens.model.analysis.alignment.scoring import gold_matrices


def read_links(path: str) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of a links file, lazily; a line that is not UTF-8 is a ValueError naming the
    file and line (model.corpora.example.decode_line)."""
    from attention_lens.model.corpora.example import read_text_lines

    if not os.path.isfile(path):
        raise ValueError(f"{path}: no such file")
    yield from read_text_lines(path)


def parse_links(text: str, where: str) -> set[Link]:
    """Every link of a Pharaoh line (sure or possible alike: an aligner's output has one kind)."""
    try:
        return set(parse_pharaoh(text).possible)
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def _matrix(links: set[Link], m: int, n: int, where: str) -> np.ndarray:
    out = np.zeros((m, n), dtype=bool)
    for i, j in links:
        if i >= n or j >= m:
            raise ValueError(f"{where}: link {i}-{j} is outside the sentence ({n} source words, {m} target words; "
                             f"indices are 0-based, source first)")
        out[j, i] = True
    return out


def score_links(data: str, links_path: str, engine: Any = None, method: str = "best", select_on: Any = None,
                progress: bool = False) -> dict[str, Any]:
    """AER, precision and recall of the links file against the gold of `data` (summed counts), `sentences`,
    `breakdown`; with an engine, `model` (its method's figures on the same sentences) and `versus` (links in
    both, only in the file, only from the model, and how many of those are right, i.e. possible gold), also per
    sentence. The breakdown's subword class counts each source word's pieces in the model's tokenizer (without a
    model, one piece a word). ValueError, naming the file and line, for a links file whose lines do not match
    the data file's (fewer lines, or links on a line where the data has no sentence)."""
    from attention_lens.model.analysis.alignment.corpus_stream import gold_lines
    from attention_lens.model.engine.stream import read_lines

    model_links: dict[int, list[Link]] = {}
    model_pieces: dict[int, tuple[int, ...]] = {}  # each source word's pieces in the model's tokenizer
    model_method = None
    if engine is not None:
        from attention_lens.model.analysis.alignment.corpus import run_alignment
        from attention_lens.model.analysis.alignment.corpus_stream import FileCorpus
        from attention_lens.model.engine.stream import Shard

        report = run_alignment(engine, method=method, select_on=select_on, progress=progress,
                               corpus=FileCorpus(data, Shard(), 32, 2048, progress))
        model_links, model_pieces, model_method = report.links, report.pieces, report.method.name
    counts = engine.source_word_counts() if engine is not None else None
    stats = WordStats.of(counts, "training") if counts else WordStats.from_sources(
        line.source for line in read_lines(data, strict=True))
    analysis = Breakdown(stats)
    rows: list[SentenceScore] = []
    model_rows: list[SentenceScore] = []
    versus_total = dict.fromkeys(("agree", "links_only", "model_only", "links_only_right", "model_only_right"), 0)
    per_versus: dict[int, dict[str, int]] = {}
    links_lines = read_links(links_path)
    at, text, n, last = 0, "", 0, 0
    for line, gold in gold_lines(data):
        n, last = n + 1, line.number
        while at < line.number:
            try:
                at, text = next(links_lines)
            except StopIteration:
                raise ValueError(f"{links_path} has {at} lines but {data} has a sentence on line {line.number}: a "
                                 f"links file has one line per line of the data file") from None
        if gold is None:
            continue
        where = f"{links_path}, line {line.number}"
        found = parse_links(text, where)
        src, tgt = line.source.split(), line.target.split()
        mask = _matrix(found, len(tgt), len(src), where)
        sure, possible = gold_matrices(gold, len(tgt), len(src))
        index = line.number - 1
        analysis.add_links(src, model_pieces.get(index) or [1] * len(src), mask, sure, possible)
        c = count(found, gold)
        rows.append(SentenceScore(index, c.s, len(gold.possible), c.a, c.a_s, c.a_p))
        if index in model_links:
            theirs = set(model_links[index])
            mc = count(theirs, gold)
            model_rows.append(SentenceScore(index, mc.s, len(gold.possible), mc.a, mc.a_s, mc.a_p))
            v = {"agree": len(found & theirs), "links_only": len(found - theirs), "model_only": len(theirs - found),
                 "links_only_right": len((found - theirs) & gold.possible),
                 "model_only_right": len((theirs - found) & gold.possible)}
            per_versus[index] = v
            for k, x in v.items():
                versus_total[k] += x
    for number, extra in links_lines:
        if extra.strip():
            raise ValueError(f"{links_path}, line {number} holds links but {data} has no sentence there (its last is "
                             f"on line {last}): a links file has one line per line of the data file")
    total = summed(rows)
    out: dict[str, Any] = {"n": n, "n_scored": len(rows), "links": links_path}
    if rows:
        out.update(total.as_dict())
    else:
        out.update(aer=None, precision=None, recall=None)
    sentences = []
    for r in rows:
        d = r.as_dict()
        if r.index in per_versus:
            d["versus"] = per_versus[r.index]
        sentences.append(d)
    out["sentences"] = sentences
    out["breakdown"] = analysis.breakdown_json()
    if engine is not None:
        out["model"] = {"method": model_method, "n_scored": len(model_rows), **summed(model_rows).as_dict()}
        out["versus"] = versus_total
    return out
