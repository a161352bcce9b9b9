"""Running an engine over a corpus: teacher forcing in batches, word attention per sentence, every method
counted, and the `align` report (with the `best` selection held out where it can be)."""

from __future__ import annotations

import tempfile
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import OMISSION_MASS, Breakdown, WordStats, is_punctuation
from attention_lens.model.analysis.alignment.links import Counts, Gold, Link, parse_pharaoh
from attention_lens.model.analysis.alignment.methods import (
    BEST,
    CONTRIBUTION_KEYS,
    DEFAULT_METHOD,
    HEADLESS,
    SEARCH_THRESHOLDS,
    Method,
    extract,
    links_of,
    searched_weights,
    selectors,
)
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.sentences import SentenceRows
from attention_lens.model.analysis.alignment.words import (
    READINGS,
    SPECIAL_PIECES,
    UNKNOWN_PIECES,
    WORD_STARTS,
    WordAttention,
    WordMismatch,
    word_attention,
    word_groups,
)
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.contributions import contributions
from attention_lens.model.engine.stream import CorpusStream, Line, Shard, read_lines

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine import Engine

def engine_specials(engine: Engine) -> frozenset[str]:
    """Piece strings of the engine's special ids (both vocabularies), plus `<s>`, `</s>`, `<pad>`; the
    unknown token stands for a word the vocabulary lacks, so it stays a word piece."""
    return frozenset((SPECIAL_PIECES | engine.special_pieces()) - UNKNOWN_PIECES - engine.unknown_pieces())


@dataclass(frozen=True)
class Aligned:
    """One sentence: its word attention, or why it could not be aligned. `pieces`: how many subword pieces
    each source word has; `sinks` (2, L, h): each head's raw cross-attention mass on special pieces and on
    punctuation pieces, summed over the sentence's `rows` decoder rows. `readings`: the word attention under
    every weights asked for (`attention` is the first's); `unavailable`: weights the model cannot give, and why."""

    index: int
    attention: WordAttention | None
    error: str = ""
    pieces: tuple[int, ...] = ()
    sinks: np.ndarray | None = None
    rows: int = 0
    readings: dict[str, WordAttention] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


class _Item(Protocol):
    source: str
    target: str


def _sinks(cross: np.ndarray, pieces: Sequence[str], specials: frozenset[str]) -> np.ndarray:
    """(2, L, h): mass on special pieces and on punctuation pieces, summed over the rows."""
    special = np.array([p in specials for p in pieces], dtype=np.float64)
    punct = np.array([p not in specials and is_punctuation(p.lstrip("".join(WORD_STARTS))) for p in pieces],
                     dtype=np.float64)
    per_key = np.asarray(cross, dtype=np.float64).sum(axis=2)  # (L, h, n)
    return np.stack([per_key @ special, per_key @ punct])


def _weighted(engine: Engine, run: Any, raw: np.ndarray, options: DecodeOptions, weights: str,
              cache: dict[str, Any]) -> np.ndarray:
    """(L, h, m, n) cross-attention of `run` under `weights` ((1, 1, m, n) for HEADLESS weights); `raw`: its
    cross-attention weights (`run` is None when those are all that was computed)."""
    if weights == "raw":
        return raw
    if weights == "saliency":
        from attention_lens.model.analysis.alignment.gradient import gradient_reading

        return gradient_reading(engine, run, options)
    if "contributions" not in cache:  # norm and rollout from one computation, parts from the same pass
        cache["contributions"] = contributions(run, run.extra.get("parts") or engine.contribution_parts(run, options))
    return cache["contributions"][CONTRIBUTION_KEYS[weights]]["cross_attention"]


def align_batches(engine: Engine, batches: Iterable[Sequence[tuple[int, _Item]]], causal: bool | None = None,
                  shift: bool | None = None, weights: str | Sequence[str] = "raw") -> Iterator[Aligned]:
    """Teacher-force each batch of (index, example) (in the setting the model was trained with, from its card,
    unless given) and yield every sentence's Aligned, batch by batch, read under `weights` (one or several:
    Aligned.readings). Sentences whose pieces do not line up with their words, or that the model cannot read,
    are yielded with an error instead; weights after the first that the model cannot give (ModelInputError)
    are left out of `readings` and named in `unavailable`."""
    wanted = (weights,) if isinstance(weights, str) else tuple(weights)
    trained_causal, trained_shift = engine.trained_setting
    causal = trained_causal if causal is None else causal
    shift = trained_shift if shift is None else shift
    engine.check_switches(causal, shift)
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift,
                            contributions=any(w in CONTRIBUTION_KEYS for w in wanted))
    specials = engine_specials(engine)
    limit = engine.max_source_tokens
    for chunk in batches:
        ready, failed = [], []
        for k, ex in chunk:
            try:
                normalised = engine.normalise(ex.source)
                if not normalised.strip():
                    raise ModelInputError("The source text is empty.")
                src_ids, src_pieces = engine.encode_source(normalised)
                if len(src_ids) > limit:  # cut: words lost (a word outside the vocabulary still aligns)
                    raise ModelInputError(f"The source has {len(src_ids)} tokens; this model reads at most {limit}.")
                target = engine.normalise_target(ex.target)
                labels = engine.encode_target(target)
            except (ModelInputError, ValueError) as exc:
                failed.append(Aligned(k, None, str(exc)))
                continue
            ready.append((k, src_ids, src_pieces, normalised.split(), labels, target.split()))
        srcs, labs = [r[1] for r in ready], [r[4] for r in ready]
        if not ready:
            runs, raws = [], []
        elif wanted == ("raw",):  # the attention weights alone: the engine's pass that computes nothing else
            raws = engine.cross_attention_batch(srcs, labs, options)
            runs = [None] * len(raws)
        else:
            runs = engine.teacher_forced_batch(srcs, labs, options)
            raws = [run.cross_attn for run in runs]
        yield from failed
        for (k, _, src_pieces, src_words, labels, tgt_words), run, raw in zip(ready, runs, raws):
            readings: dict[str, WordAttention] = {}
            unavailable: dict[str, str] = {}
            cache: dict[str, Any] = {}
            label_pieces = [engine.piece(i) for i in labels]
            try:
                for w in wanted:
                    try:
                        cross = _weighted(engine, run, raw, options, w, cache)
                    except ModelInputError as exc:
                        if w == wanted[0]:
                            raise
                        unavailable[w] = str(exc)
                        continue
                    readings[w] = word_attention(cross, src_pieces, label_pieces, src_words, tgt_words,
                                                 shift=shift, specials=specials)
            except WordMismatch as exc:
                yield Aligned(k, None, str(exc))
                continue
            pieces = tuple(len(g) for g in word_groups(src_pieces, specials))
            yield Aligned(k, readings[wanted[0]], pieces=pieces, sinks=_sinks(raw, src_pieces, specials),
                          rows=raw.shape[2], readings=readings, unavailable=unavailable)


def align_corpus(engine: Engine, examples: Sequence[Example], batch_size: int = 32, progress: bool = True,
                 causal: bool | None = None, shift: bool | None = None, weights: str = "raw") -> Iterator[Aligned]:
    """align_batches over consecutive batches of `examples`, yielded in order, with a progress bar."""
    from tqdm import tqdm

    bar = tqdm(total=len(examples), desc="aligning", unit="sent", disable=not progress, leave=False)
    for start in range(0, len(examples), batch_size):
        chunk = list(enumerate(examples[start:start + batch_size], start))
        yield from sorted(align_batches(engine, [chunk], causal, shift, weights), key=lambda a: a.index)
        bar.update(len(chunk))
    bar.close()


@dataclass(frozen=True)
class SentenceScore:
    """One scored sentence's counts under the chosen method (summable: a group's figures are from its sums)."""

    index: int
    sure: int
    possible: int
    predicted: int
    hits_sure: int
    hits_possible: int
    selection: bool = False  # `best`: one of the sentences the method was chosen on (not in the reported figures)
    omitted: tuple[int, ...] = ()  # source words omitted (breakdown.OMISSION_MASS)

    @property
    def counts(self) -> Counts:
        return Counts(self.predicted, self.sure, self.hits_sure, self.hits_possible)

    def as_dict(self) -> dict[str, Any]:
        c = self.counts
        out = {"index": self.index, "aer": c.aer, "precision": c.precision, "recall": c.recall, "sure": self.sure,
               "possible": self.possible, "predicted": self.predicted, "hits_sure": self.hits_sure,
               "hits_possible": self.hits_possible}
        if self.selection:
            out["selection"] = True
        if self.omitted:
            out["omitted"] = list(self.omitted)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SentenceScore:
        return cls(int(d["index"]), int(d["sure"]), int(d["possible"]), int(d["predicted"]), int(d["hits_sure"]),
                   int(d["hits_possible"]), bool(d.get("selection", False)), tuple(d.get("omitted", ())))


def summed(rows: Iterable[SentenceScore]) -> Counts:
    """The counts of a group of sentences (corpus figures are always these sums, never a mean of ratios)."""
    total = Counts()
    for r in rows:
        total = total + r.counts
    return total


@dataclass
class Report:
    """Everything `align` prints: the tally on the scored sentences, the predicted links, what was skipped,
    per-sentence counts and the error breakdown of the chosen method."""

    tally: Tally | None  # every method, every sentence with gold
    links: dict[int, list[Link]]  # sentence index -> links of the chosen method (when kept)
    method: Method
    skipped: list[tuple[int, str]]
    n: int
    n_gold: int
    selection: dict[str, Any] = field(default_factory=dict)
    held_out: Tally | None = None  # `best`: the tally of the sentences the choice was NOT made on
    sentences: Iterable[SentenceScore] = field(default_factory=list)  # any order (a corpus: SentenceRows)
    analysis: dict[str, Any] = field(default_factory=dict)  # breakdown, omissions, sinks (Breakdown.summary)

    @property
    def reported(self) -> Tally | None:
        """The tally the corpus figures are read from."""
        return self.held_out or self.tally

    def summary(self, sentences: bool = True) -> dict[str, Any]:
        """The docs/formats.md `align --json` object, plus `readings`, `selection`, `skipped`, `sentences`
        (left out when not `sentences`: sentences.write_summary streams them), `breakdown`, `omissions`,
        `sinks` and `merge` (the counts a merge of shards adds up)."""
        scored = self.reported
        out: dict[str, Any] = {"n": self.n, "n_scored": scored.n if scored else 0,
                               "n_gold": self.tally.n if self.tally else 0, "method": self.method.name}
        if scored is None or scored.n == 0:
            out.update(aer=None, precision=None, recall=None, heads=[], readings={},
                       note="no gold links in the file: links extracted, metrics skipped")
        else:
            out.update(scored[self.method].as_dict())
            m = self.method
            out["heads"] = [] if m.weights in HEADLESS else [
                {"layer": li, "head": hi, "aer": self.tally[Method(m.extract, m.reading, li, hi, m.threshold,
                                                                  m.weights)].aer}
                for li, hi in selectors(self.tally.layers, self.tally.heads) if hi is not None]
            out["readings"] = {}
            for reading in READINGS:
                if self.selection:  # `best`: the best method of each reading, chosen and reported as above
                    pick = self.selection["per_reading"][reading]
                    pick = Method.parse(pick) if isinstance(pick, str) else pick
                else:
                    pick = Method(m.extract, reading, m.layer, m.head, m.threshold, m.weights)
                out["readings"][reading] = {"method": pick.name, **scored[pick].as_dict()}
        if self.selection:
            out["selection"] = {k: v for k, v in self.selection.items() if k != "per_reading"}
        out["skipped"] = [{"index": i, "reason": r} for i, r in sorted(self.skipped)]
        if sentences:
            out["sentences"] = [r.as_dict() for r in sorted(self.sentences, key=lambda r: r.index)]
        out.update(self.analysis)
        out["merge"] = self.merge_counts()
        return out

    def merge_counts(self) -> dict[str, Any]:
        """What `merge` needs to add shards up exactly: every counted method's summed counts."""
        out: dict[str, Any] = {"kind": "align", "n": self.n}
        for name, tally in (("tally", self.tally), ("reported", self.held_out)):
            if tally is not None:
                out[name] = {"layers": tally.layers, "heads": tally.heads, "thresholds": list(tally.thresholds),
                             "weights": tally.weights, "n": tally.n, "counts": tally.counts.tolist()}
        if self.selection:
            out["selection"] = {k: (v.name if isinstance(v, Method) else v) for k, v in self.selection.items()
                                if k != "per_reading"}
            out["selection"]["per_reading"] = {r: (p.name if isinstance(p, Method) else p)
                                               for r, p in self.selection["per_reading"].items()}
        return out


class Corpus(Protocol):
    """Sentences to align: batches of (index, example) for the indices `keep` accepts; the indices of the
    sentences with gold links (parsed and checked: ValueError naming the bad one); their source sentences."""

    def batches(self, keep: Callable[[int], bool] | None = None) -> Iterable[list[tuple[int, Any]]]: ...

    def golds(self) -> list[int]: ...

    def gold(self, index: int, item: Any) -> Gold | None: ...

    def sources(self) -> Iterable[str]: ...


def check_gold(text: str, source: str, target: str, what: str) -> Gold:
    try:
        gold = parse_pharaoh(text)
        gold.check(len(source.split()), len(target.split()))
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    return gold


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
                check_gold(line.gold, line.source, line.target, f"line {line.number}")
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


def _fits(wa: WordAttention, ex: Any) -> bool:
    """The engine's normalised words are as many as the file's, so gold indices point at the same words."""
    return len(wa.source_words) == len(ex.source.split()) and len(wa.target_words) == len(ex.target.split())


MISFIT = "normalising the sentence changed its number of words, so the gold indices would not match"


class _Spill:
    """Per-sentence count blocks of every method, kept in a temporary file (memory does not grow with them)."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile()  # noqa: SIM115 -- closed by close()
        self.index = array("q")
        self.possible = array("q")
        self.shape: tuple[int, int] | None = None

    def add(self, index: int, block: np.ndarray, possible: int) -> None:
        self.shape = block.shape
        self.file.write(block.astype(np.int32).tobytes())
        self.index.append(index)
        self.possible.append(possible)

    def rows(self, column: int) -> Iterator[tuple[int, np.ndarray, int]]:
        """(index, counts of method `column`, |P|) for every spilled sentence, in the order added."""
        if self.shape is None:
            return
        self.file.seek(0)
        size = self.shape[0] * self.shape[1] * 4
        for index, possible in zip(self.index, self.possible):
            block = np.frombuffer(self.file.read(size), dtype=np.int32).reshape(self.shape)
            yield index, block[column], possible

    def close(self) -> None:
        self.file.close()


def word_stats(engine: Engine, corpus: Corpus) -> WordStats:
    """Source word frequencies from the model's training counts when it ships them, else from the file."""
    counts = engine.source_word_counts()
    return WordStats.of(counts, "training") if counts else WordStats.from_sources(corpus.sources())


def run_alignment(engine: Engine, examples: Sequence[Example] | None = None, method: str = DEFAULT_METHOD,
                  batch_size: int = 32, progress: bool = True, select_on: Sequence[Example] | None = None, *,
                  corpus: Corpus | None = None, keep_links: bool = True,
                  on_links: Callable[[int, list[Link]], None] | None = None,
                  omission_mass: float = OMISSION_MASS) -> Report:
    """Align every sentence and count every candidate method against its gold links (when it has any), with
    per-sentence counts, the breakdown, omissions and sinks of the chosen method. Memory does not grow with the
    number of sentences (the corpus is read in batches; per-sentence results are a few integers), except the
    links when `keep_links` (`on_links` receives each sentence's links instead, in no particular order).

    `best` picks the lowest-AER method among every method on every weights it searches (`best`: raw,
    norm-weighted, rollout and the gradient reading; `selection.candidates` lists each weights' best): on
    `select_on` when given (other sentences with gold, e.g. a valid split), its scores then reported on all of
    the corpus; otherwise, with 20 or more gold sentences, on the first half, scores reported on the second half
    (a held-out estimate); with fewer, chosen and reported on the same sentences, and the report says so."""
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
        pre_corpus = MemoryCorpus(select_on, batch_size, progress, "selection sentence")
        pre_corpus.golds()
        pres = {w: new(w) for w in searched}
        for item in align_batches(engine, pre_corpus.batches(), weights=searched):
            ex = select_on[item.index]
            unavailable.update(item.unavailable)
            if item.attention is not None and ex.gold.strip() and _fits(item.attention, ex):
                gold = parse_pharaoh(ex.gold)
                for w, wa in item.readings.items():
                    pres[w].add(wa, gold)
        if pres[searched[0]].n == 0:
            raise ValueError("no sentence of the selection data has gold links this model could align")
        chosen, per_reading, listed = _choose(pres, unavailable)
        selection = {"chosen_on": pres[searched[0]].n, "per_reading": per_reading, "candidates": listed,
                     "note": "best method chosen on separate selection sentences, scores reported on these"}
    picked: frozenset[int] = frozenset()  # `best` without selection data: the sentences it is chosen on
    in_sample = False
    if chosen is None:
        if len(gold_ids) >= 20:
            picked = frozenset(gold_ids[:len(gold_ids) // 2])
        else:
            picked, in_sample = frozenset(gold_ids), True
    stats = word_stats(engine, corpus)
    analysis = Breakdown(stats, omission_mass)
    links: dict[int, list[Link]] = {}
    skipped: list[tuple[int, str]] = []
    rows = SentenceRows()  # a few integers per sentence
    n_read = 0

    # 1. `best` without selection data: count every method of every weights searched on the chosen-on
    #    sentences, their blocks (every weights' side by side) spilled
    sel_tallies = {w: new(w) for w in searched}
    offsets = dict(zip(searched, np.cumsum([0] + [len(t.methods) for t in sel_tallies.values()])[:-1].tolist()))
    spill = _Spill()
    if picked:
        for batch_items, item in _aligned(engine, corpus, lambda k: k in picked, searched):
            n_read += 1
            ex = batch_items[item.index]
            unavailable.update(item.unavailable)
            if item.attention is None or not _fits(item.attention, ex):
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
        if sel_tallies[searched[0]].n == 0:
            chosen = Method.parse(DEFAULT_METHOD)
            selection = {"note": f"no gold links: 'best' cannot choose, so {DEFAULT_METHOD} was used"}
        else:
            chosen, per_reading, listed = _choose(sel_tallies, unavailable)
            selection = {"chosen_on": sel_tallies[chosen.weights].n, "per_reading": per_reading,
                         "candidates": listed,
                         "note": ("best method chosen and scored on the same sentences (fewer than 20 with gold): "
                                  "an optimistic, in-sample figure") if in_sample else
                         ("best method chosen on the first half of the gold sentences, scores reported on the "
                          "second half")}
    elif chosen is None:
        chosen = Method.parse(DEFAULT_METHOD)
        selection = {"note": f"no gold links: 'best' cannot choose, so {DEFAULT_METHOD} was used"}
    weights = chosen.weights
    sel_tally = sel_tallies.get(weights) or new(weights)
    column = offsets.get(weights, 0) + sel_tally.index[chosen.name]

    def score(item: Aligned, ex: Any, tally: Tally | None, count_rows: bool) -> tuple[int, ...]:
        """Count and hand on one sentence's links under the chosen method; its omitted source words."""
        wa = item.attention
        mask = extract(wa.matrix(chosen.reading, chosen.layer, chosen.head), chosen.extract, chosen.threshold)
        found = links_of(mask)
        if keep_links:
            links[item.index] = found
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
    for batch_items, item in _aligned(engine, corpus, (lambda k: k not in picked) if picked else None, weights):
        n_read += 1
        ex = batch_items[item.index]
        if item.attention is None or not _fits(item.attention, ex):
            skipped.append((item.index, item.error or MISFIT))
            continue
        score(item, ex, rest, True)

    # 3. the chosen-on sentences again, with the method now known, for their links (and, when they are the
    #    reported ones, their breakdown); their counts come from the spilled blocks
    omitted_of: dict[int, tuple[int, ...]] = {}
    if picked and sel_tally.n and (keep_links or on_links is not None or in_sample):
        for batch_items, item in _aligned(engine, corpus, lambda k: k in picked, weights):
            if item.attention is None or not _fits(item.attention, batch_items[item.index]):
                continue
            if in_sample:
                omitted_of[item.index] = score(item, batch_items[item.index], None, False)
            else:
                mask = extract(item.attention.matrix(chosen.reading, chosen.layer, chosen.head), chosen.extract,
                               chosen.threshold)
                if keep_links:
                    links[item.index] = links_of(mask)
                if on_links is not None:
                    on_links(item.index, links_of(mask))
    for index, c, possible in spill.rows(column):
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
                  analysis.summary())


def _choose(tallies: dict[str, Tally], unavailable: dict[str, str]) -> tuple[Method, dict[str, Method],
                                                                           list[dict[str, Any]]]:
    """`best` over several weights' tallies of the same sentences: the lowest-AER method of them all (ties: the
    first weights searched), the best of each reading on the chosen weights, and every weights' best (the
    candidates), with the weights the model could not give."""
    listed: list[dict[str, Any]] = []
    chosen: Method | None = None
    for w, tally in tallies.items():
        if w in unavailable or tally.n == 0:
            listed.append({"weights": w, "method": None, "aer": None,
                           "note": unavailable.get(w, "no sentence counted")})
            continue
        pick = tally.best()
        listed.append({"weights": w, "method": pick.name, "aer": tally[pick].aer})
        if chosen is None or tally[pick].aer < tallies[chosen.weights][chosen].aer:
            chosen = pick
    assert chosen is not None  # the first weights is always counted (align_batches raises otherwise)
    return chosen, {r: tallies[chosen.weights].best(r) for r in READINGS}, listed


def _aligned(engine: Engine, corpus: Corpus, keep: Callable[[int], bool] | None,
             weights: str | Sequence[str]) -> Iterator[tuple[dict[int, Any], Aligned]]:
    """(the batch's items by index, Aligned) for every sentence `keep` accepts."""
    for batch in corpus.batches(keep):
        items = dict(batch)
        for item in align_batches(engine, [batch], weights=weights):
            yield items, item


def _tally_of(entry: dict[str, Any]) -> Tally:
    tally = Tally(int(entry["layers"]), int(entry["heads"]), tuple(float(t) for t in entry["thresholds"]),
                  str(entry["weights"]))
    counts = np.asarray(entry["counts"], dtype=np.int64)
    if counts.shape != tally.counts.shape:
        raise ValueError("the counts do not match the method list of their layout")
    tally.counts, tally.n = counts, int(entry["n"])
    return tally


def merge_summaries(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The `align --json` objects of N shards (the same model, method and options) as one run's: every count
    summed (the tally of every method, the per-sentence counts, the breakdown), the ratios computed from the
    sums. ValueError, one line, for outputs that cannot be added up."""
    if not parts:
        raise ValueError("nothing to merge")
    merges = [p.get("merge") for p in parts]
    if not all(isinstance(m, dict) and m.get("kind") == "align" for m in merges):
        raise ValueError("every file must be the --json output of align (with its 'merge' counts)")
    methods = {p["method"] for p in parts}
    if len(methods) != 1:
        raise ValueError(f"the shards used different methods ({', '.join(sorted(methods))}); merge needs one")
    selections = [m.get("selection") for m in merges]
    if any(s and "per_reading" in s and "separate" not in str(s.get("note", "")) for s in selections):
        raise ValueError("a --method best run without --select-on chose its method on its own sentences, so "
                         "shards cannot be added up: use a fixed method or --method best --select-on FILE")
    if any(s != selections[0] for s in selections):
        raise ValueError("the shards' best methods were chosen differently; use the same --select-on file")
    tallies = [_tally_of(m["tally"]) for m in merges if "tally" in m]
    tally = None
    for t in tallies:
        tally = t if tally is None else tally.merged(t)
    method = Method.parse(parts[0]["method"])
    selection: dict[str, Any] = {}
    if selections[0]:
        selection = dict(selections[0])
        if tally is not None and "chosen_on" in selection:
            selection["reported_on"] = tally.n
            selection["in_sample_aer"] = tally[method].aer
    sentences = [SentenceScore.from_dict(r) for p in parts for r in p["sentences"]]
    skipped = [(int(s["index"]), str(s["reason"])) for p in parts for s in p["skipped"]]
    from attention_lens.model.analysis.alignment.breakdown import merge_summaries as merge_analysis

    analysis = merge_analysis(parts) if all("breakdown" in p for p in parts) else {}
    n = sum(int(m["n"]) for m in merges)
    report = Report(tally if tally is not None and tally.n else None, {}, method, skipped, n,
                    tally.n if tally else 0, selection, None, sentences, analysis)
    return report.summary()
