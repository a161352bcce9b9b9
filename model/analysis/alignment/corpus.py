"""Running an engine over a corpus for `align`: every sentence aligned (sentence_attention.py), every candidate method
counted against its gold links, the chosen method's per-sentence counts, links, breakdown, omissions and sinks, and
the report (report.py), with `best` chosen on part of the sentences (best.py) where it can be held out."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attention_lens.model.analysis.alignment.best import Spill, choose_in_corpus, choose_on, chosen_on_split
from attention_lens.model.analysis.alignment.breakdown import OMISSION_MASS, Breakdown, WordStats
from attention_lens.model.analysis.alignment.corpus_stream import MISFIT, Corpus, MemoryCorpus, fits
from attention_lens.model.analysis.alignment.links import Link
from attention_lens.model.analysis.alignment.methods import (
    BEST,
    DEFAULT_METHOD,
    SEARCH_THRESHOLDS,
    Method,
    extract,
    links_of,
    searched_weights,
)
from attention_lens.model.analysis.alignment.report import Report
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.sentence_attention import Aligned, align_batches
from attention_lens.model.analysis.alignment.sentences import SentenceRows

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine import Engine


def word_stats(engine: Engine, corpus: Corpus) -> WordStats:
    """Source word frequencies from the model's training counts when it ships them, else from the file."""
    counts = engine.source_word_counts()
    return WordStats.of(counts, "training") if counts else WordStats.from_sources(corpus.sources())


def run_alignment(engine: Engine, examples: Sequence[Example] | None = None, method: str = DEFAULT_METHOD,
                  batch_size: int = 32, progress: bool = True, select_on: Sequence[Example] | None = None, *,
                  corpus: Corpus | None = None, keep_links: bool = True,
                  on_links: Callable[[int, list[Link]], None] | None = None,
                  omission_mass: float = OMISSION_MASS, workers: int = 0) -> Report:
    """Align every sentence and count every candidate method against its gold links (when it has any), with
    per-sentence counts, the breakdown, omissions and sinks of the chosen method. Memory does not grow with the
    number of sentences (the corpus is read in batches; per-sentence results are a few integers), except the
    links when `keep_links` (with each sentence's pieces per source word; `on_links` receives each sentence's
    links instead, in no particular order).

    `best` picks the lowest-AER method among every method on every weights it searches (`best`: raw,
    norm-weighted, rollout and the gradient reading; `selection.candidates` lists each weights' best): on
    `select_on` when given (other sentences with gold, e.g. a valid split), its scores then reported on all of
    the corpus; otherwise, with 20 or more gold sentences, on the first half, scores reported on the second half
    (a held-out estimate); with fewer, chosen and reported on the same sentences, and the report says so.

    workers: the model's passes run on that many threads ahead of the counting (align_batches); the same
    report."""
    corpus = corpus if corpus is not None else MemoryCorpus(examples or [], batch_size, progress)
    searched = searched_weights(method)
    chosen = None if method.startswith(BEST) else Method.parse(method)
    thresholds = SEARCH_THRESHOLDS
    if chosen is not None:
        chosen.check(engine.n_decoder_layers, engine.n_heads)
        if chosen.threshold not in thresholds:
            thresholds = (*thresholds, chosen.threshold)

    def new(weights: str) -> Tally:
        return Tally(engine.n_decoder_layers, engine.n_heads, thresholds, weights)

    gold_ids = corpus.golds()
    selection: dict[str, Any] = {}
    unavailable: dict[str, str] = {}
    if chosen is None and select_on is not None:
        chosen, selection = choose_on(engine, select_on, {w: new(w) for w in searched}, batch_size, progress,
                                      unavailable)
    picked: frozenset[int] = frozenset()  # `best` without selection data: the sentences it is chosen on
    in_sample = False
    if chosen is None:
        picked, in_sample = chosen_on_split(gold_ids)
    stats = word_stats(engine, corpus)
    analysis = Breakdown(stats, omission_mass)
    links: dict[int, list[Link]] = {}
    pieces: dict[int, tuple[int, ...]] = {}  # with the links: each source word's subword pieces
    skipped: list[tuple[int, str]] = []
    rows = SentenceRows()  # a few integers per sentence
    n_read = 0

    # 1. `best` without selection data: count every method of every weights searched on the chosen-on
    #    sentences, their blocks (every weights' side by side) spilled
    sel_tallies = {w: new(w) for w in searched}
    offsets = dict(zip(searched, np.cumsum([0] + [len(t.methods) for t in sel_tallies.values()])[:-1].tolist()))
    spill = Spill()
    if picked:
        for batch_items, item in _aligned(engine, corpus, lambda k: k in picked, searched, workers):
            n_read += 1
            ex = batch_items[item.index]
            unavailable.update(item.unavailable)
            if item.attention is None or not fits(item.attention, ex):
                skipped.append((item.index, item.error or MISFIT))
                continue
            gold = corpus.gold(item.index, ex)
            blocks = []
            for w, tally in sel_tallies.items():
                if w in item.readings:
                    blocks.append(tally.block(item.readings[w], gold))
                    tally.add_block(blocks[-1])
                else:
                    blocks.append(np.zeros((len(tally.methods), 4), dtype=np.int64))
            spill.add(item.index, np.concatenate(blocks), len(gold.possible))
    if chosen is None:  # `best` on the corpus's own sentences (DEFAULT_METHOD when none could be counted)
        chosen, selection = choose_in_corpus(sel_tallies, unavailable, in_sample, bool(gold_ids))
    weights = chosen.weights
    sel_tally = sel_tallies.get(weights) or new(weights)
    column = sel_tally.index[chosen.name]  # the chosen method's row in a block of its own weights' methods
    spilled_column = offsets.get(weights, 0) + column  # ... and in a spilled block (every weights side by side)

    def score(item: Aligned, ex: Any, tally: Tally | None, count_rows: bool) -> tuple[int, ...]:
        """Count and hand on one sentence's links under the chosen method; its omitted source words."""
        wa = item.attention
        mask = extract(wa.matrix(chosen.reading, chosen.layer, chosen.head), chosen.extract, chosen.threshold)
        found = links_of(mask)
        if keep_links:
            links[item.index] = found
            pieces[item.index] = item.pieces
        if on_links is not None:
            on_links(item.index, found)
        mass = wa.matrix(chosen.reading, None, None).sum(axis=0)
        omitted = tuple(analysis.add_omissions(wa.source_words, mask, mass))
        if item.sinks is not None:
            analysis.add_sinks(item.sinks, item.rows)
        gold = corpus.gold(item.index, ex)
        if gold is None:
            return omitted
        sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
        analysis.add_links(wa.source_words, item.pieces, mask, sure, possible)
        if tally is not None:
            block = tally.block(wa, gold)
            tally.add_block(block)
            c = block[column]
        else:
            c = (int(mask.sum()), int(sure.sum()), int((mask & sure).sum()), int((mask & possible).sum()))
        if count_rows:
            rows.add(item.index, int(c[1]), len(gold.possible), int(c[0]), int(c[2]), int(c[3]), omitted=omitted)
        return omitted

    # 2. every other sentence, with the method known: counted, scored, its links handed on
    rest = new(weights)
    for batch_items, item in _aligned(engine, corpus, (lambda k: k not in picked) if picked else None, weights,
                                     workers):
        n_read += 1
        ex = batch_items[item.index]
        if item.attention is None or not fits(item.attention, ex):
            skipped.append((item.index, item.error or MISFIT))
            continue
        score(item, ex, rest, True)

    # 3. the chosen-on sentences again, with the method now known, for their links (and, when they are the
    #    reported ones, their breakdown); their counts come from the spilled blocks
    omitted_of: dict[int, tuple[int, ...]] = {}
    if picked and sel_tally.n and (keep_links or on_links is not None or in_sample):
        for batch_items, item in _aligned(engine, corpus, lambda k: k in picked, weights, workers):
            if item.attention is None or not fits(item.attention, batch_items[item.index]):
                continue
            if in_sample:
                omitted_of[item.index] = score(item, batch_items[item.index], None, False)
            else:
                mask = extract(item.attention.matrix(chosen.reading, chosen.layer, chosen.head), chosen.extract,
                               chosen.threshold)
                if keep_links:
                    links[item.index] = links_of(mask)
                    pieces[item.index] = item.pieces
                if on_links is not None:
                    on_links(item.index, links_of(mask))
    for index, c, possible in spill.rows(spilled_column):
        rows.add(index, int(c[1]), possible, int(c[0]), int(c[2]), int(c[3]), selection=not in_sample,
                 omitted=omitted_of.get(index, ()))
    spill.close()

    if picked:
        tally = sel_tally.merged(rest) if rest.n else sel_tally
        held = rest if not in_sample and sel_tally.n else None
        if sel_tally.n:
            selection["reported_on"] = (held.n if held is not None else sel_tally.n)
            selection["in_sample_aer"] = tally[chosen].aer
    else:
        tally, held = rest, None
        if selection.get("chosen_on"):
            selection["reported_on"] = rest.n
            if rest.n:
                selection["in_sample_aer"] = rest[chosen].aer
    n_total = n_read if not isinstance(corpus, MemoryCorpus) else len(corpus.examples)
    return Report(tally if tally.n else None, links, chosen, skipped, n_total, tally.n, selection, held, rows,
                  analysis.summary(), len(gold_ids), pieces)



def _aligned(engine: Engine, corpus: Corpus, keep: Callable[[int], bool] | None, weights: str | Sequence[str],
             workers: int = 0) -> Iterator[tuple[dict[int, Any], Aligned]]:
    """(the items read and not yet aligned, by index; Aligned) for every sentence `keep` accepts, in the
    corpus's order; `workers`: align_batches's (the items of the batches read ahead are held meanwhile)."""
    held: dict[int, Any] = {}

    def read() -> Iterator[list[tuple[int, Any]]]:
        for batch in corpus.batches(keep):
            held.update(batch)
            yield batch

    for item in align_batches(engine, read(), weights=weights, workers=workers):
        yield held, item
        del held[item.index]

