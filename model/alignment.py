"""Word alignments from cross-attention, scored against gold links (precision, recall, AER).

**Pieces to words.** Attention is over subword pieces; gold links are over the whitespace tokens of the
normalised sentence (corpus-spec.md). Pieces are grouped into words by one rule, the same on both sides:

- a special token (`</s>`, `<s>`, `<pad>`, language codes: the engine's special ids) belongs to no word;
- a piece starts a new word if it begins with a word-start marker, "▁" (SentencePiece: our models, Marian,
  T5) or "Ġ" (byte-level BPE: BART, GPT-2), or if it is the first non-special piece, or follows a special;
- in WordPiece vocabularies (no marker anywhere in the sentence) a piece starting with "##" continues the
  previous word and every other piece starts one, so a punctuation piece that is its own whitespace token
  is its own word;
- any other piece continues the previous word (`▁s` + `'` is the one word `s'`).

The words found must line up one to one with the whitespace tokens of the normalised text; if the counts
differ the sentence is reported (`WordMismatch`, with the grouping) instead of being scored with shifted
indices.

**Word attention.** For target word t and source word s, W[t, s] = mean over t's query rows of the sum over
s's key columns. Summing over key pieces keeps the attention mass the word received (a word split into two
pieces is not penalised for sharing its weight between them); averaging over query pieces keeps every target
word's row a distribution of the same total as a single piece's row. This is the usual choice (Zenkel et
al. 2019; Garg et al. 2019; Chen et al. 2020). Mass on special keys (mostly `</s>`) is dropped, not
renormalised: a row that looks at `</s>` is saying it looks at no word.

**Two readings of a decoder row.** Row t of cross-attention is the position that READ decoder input t and
PREDICTS label t. *plain*: target word t is read off the rows that predict its pieces. *shift*: Chen et
al. (2020), "Accurate Word Alignment Induction from Neural Machine Translation", observe that the row at
which label t is the decoder's INPUT aligns better; under the right shift that is row t + 1. Teacher
forcing with the gold target computes every row in one pass. (For a model run without the shift, row t
reads label t itself and both readings coincide.)

**Extraction**, per word matrix: `argmax` (each target word to its highest-weight source word), `threshold`
(every link with weight >= tau, default `DEFAULT_THRESHOLD`), `inter` / `union` (target-side argmax
intersected with / joined to source-side argmax, each source word to its highest-weight target word).
Matrices: one head (`L2H1`, layers and heads 1-based), the mean over a layer's heads (`layer2`), the mean
over every head (`mean`). A method name is `extract-reading-selector`, e.g. `argmax-shift-L2H1`,
`threshold0.3-plain-layer2`, `argmax-mean` (reading omitted: `DEFAULT_READING`). The default method,
`DEFAULT_METHOD`, and `DEFAULT_THRESHOLD` were chosen on the shipped models' valid splits.

**Metrics** (Och & Ney 2003), with A predicted, S sure and P possible links (S is a subset of P):
precision = |A & P| / |A|, recall = |A & S| / |S|, AER = 1 - (|A & S| + |A & P|) / (|A| + |S|). Over a
corpus the counts are summed over sentences before dividing (corpus-level, not a mean of ratios).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from model.corpora import Example
    from model.engine import Engine, RawRun
    from model.trace import Trace

WORD_STARTS = ("\u2581", "\u0120")  # "▁" SentencePiece, "Ġ" byte-level BPE
CONTINUATION = "##"  # WordPiece
SPECIAL_PIECES = frozenset({"<s>", "</s>", "<pad>"})
UNKNOWN_PIECES = frozenset({"<unk>", "[UNK]"})  # stand for (part of) a word, so never treated as special
READINGS = ("plain", "shift")
EXTRACTS = ("argmax", "threshold", "inter", "union")
DEFAULT_THRESHOLD = 0.3
# Chosen on the valid splits of the shipped en-fr and de-en models (never on their test splits): the plain
# reading beat the shift-aware one by far there, and the union of both argmax directions over the mean of
# every head was the best choice that needs no head selection (AER 0.07 / 0.10).
DEFAULT_READING = "plain"
DEFAULT_METHOD = "union-plain-mean"
BEST = "best"
SEARCH_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)  # the thresholds `best` tries


class WordMismatch(ValueError):
    """The pieces do not group into as many words as the text has whitespace tokens."""


# ---- Pharaoh links -----------------------------------------------------------------------------------------
Link = tuple[int, int]  # (source word, target word), 0-based


@dataclass(frozen=True)
class Gold:
    sure: frozenset[Link]
    possible: frozenset[Link]  # sure and possible links: P, with S a subset of P

    def __post_init__(self) -> None:
        if not self.sure <= self.possible:
            raise ValueError("gold: every sure link must also be in the possible set")

    def check(self, n_source: int, n_target: int) -> None:
        """Raise ValueError if a link points past the sentence's words."""
        bad = sorted((i, j) for i, j in self.possible if i >= n_source or j >= n_target)
        if bad:
            i, j = bad[0]
            raise ValueError(f"gold link {i}-{j} is outside the sentence ({n_source} source words, {n_target} "
                             f"target words; indices are 0-based)")


_LINK = re.compile(r"^(\d+)([-?])(\d+)$")


def parse_pharaoh(text: str) -> Gold:
    """`"0-0 1?2 2-1"` -> Gold. `i-j` is sure, `i?j` possible, source index first. A pair given both ways
    is sure. Raises ValueError naming the bad item."""
    sure: set[Link] = set()
    possible: set[Link] = set()
    for k, item in enumerate(text.split()):
        match = _LINK.match(item)
        if not match:
            raise ValueError(f"Pharaoh link {k + 1} {item!r} is not 'i-j' (sure) or 'i?j' (possible) with 0-based "
                             f"integer indices, source first")
        link = (int(match.group(1)), int(match.group(3)))
        possible.add(link)
        if match.group(2) == "-":
            sure.add(link)
    return Gold(frozenset(sure), frozenset(possible))


def format_pharaoh(links: Iterable[Link], possible: Iterable[Link] = ()) -> str:
    """Links as `i-j` (and `possible` ones not in `links` as `i?j`), sorted by target then source word."""
    sure = set(links)
    out = [(j, i, "-") for i, j in sure] + [(j, i, "?") for i, j in set(possible) - sure]
    return " ".join(f"{i}{kind}{j}" for j, i, kind in sorted(out))


# ---- metrics -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Counts:
    """|A|, |S|, |A & S|, |A & P|: enough for precision, recall and AER, and summable over sentences."""

    a: int = 0
    s: int = 0
    a_s: int = 0
    a_p: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.a + other.a, self.s + other.s, self.a_s + other.a_s, self.a_p + other.a_p)

    @property
    def precision(self) -> float:
        return self.a_p / self.a if self.a else 0.0

    @property
    def recall(self) -> float:
        return self.a_s / self.s if self.s else 0.0

    @property
    def aer(self) -> float:
        total = self.a + self.s
        return 1.0 - (self.a_s + self.a_p) / total if total else 0.0

    def as_dict(self) -> dict[str, float]:
        return {"aer": self.aer, "precision": self.precision, "recall": self.recall}


def count(predicted: Iterable[Link], gold: Gold) -> Counts:
    a = set(predicted)
    return Counts(len(a), len(gold.sure), len(a & gold.sure), len(a & gold.possible))


def scores(predicted: Iterable[Link], gold: Gold) -> dict[str, float]:
    """Precision, recall and AER of one link set (Och & Ney 2003)."""
    return count(predicted, gold).as_dict()


# ---- pieces to words ---------------------------------------------------------------------------------------
def word_groups(pieces: Sequence[str], specials: Iterable[str] = SPECIAL_PIECES) -> list[list[int]]:
    """Piece positions of each word, in order (the rule in the module docstring). Specials are in no group."""
    specials = frozenset(specials)
    marked = any(p.startswith(WORD_STARTS) for p in pieces if p not in specials)
    groups: list[list[int]] = []
    after_special = True
    for k, p in enumerate(pieces):
        if p in specials:
            after_special = True
            continue
        starts = p.startswith(WORD_STARTS) if marked else not p.startswith(CONTINUATION)
        if starts or after_special or not groups:
            groups.append([k])
        else:
            groups[-1].append(k)
        after_special = False
    return groups


def check_words(groups: list[list[int]], pieces: Sequence[str], words: Sequence[str], side: str) -> None:
    """Raise WordMismatch, showing the grouping, unless there is one group per whitespace word."""
    if len(groups) != len(words):
        shown = " ".join("[" + " ".join(pieces[k] for k in g) + "]" for g in groups)
        raise WordMismatch(f"{side}: the text has {len(words)} words ({' '.join(words)!r}) but its pieces group "
                           f"into {len(groups)}: {shown}"
                           + (" (was it cut to the model's positions?)" if len(groups) < len(words) else ""))


def query_rows(groups: list[list[int]], m: int, reading: str, shift: bool = True) -> list[list[int]]:
    """The decoder rows that stand for each target word. groups: label positions of each word; m rows.

    plain: the rows that predict the word's pieces (row t predicts label t). shift (Chen et al. 2020): the
    rows at which the word's pieces are the decoder's input, row t + 1 with the right shift (row t without
    it); a piece whose input row does not exist (the last label) is dropped."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    offset = 1 if (reading == "shift" and shift) else 0
    return [[t + offset for t in g if t + offset < m] for g in groups]


def pooling(groups: list[list[int]], size: int, mean: bool) -> np.ndarray:
    """(len(groups), size): row w is the indicator of group w's positions, divided by its size if `mean`."""
    out = np.zeros((len(groups), size), dtype=np.float64)
    for w, g in enumerate(groups):
        if g:
            out[w, g] = 1.0 / len(g) if mean else 1.0
    return out


@dataclass(frozen=True)
class WordAttention:
    """One sentence's cross-attention at word level, under both readings. Arrays (L, h, m_words, n_words)."""

    source_words: tuple[str, ...]
    target_words: tuple[str, ...]
    plain: np.ndarray
    shift: np.ndarray

    @property
    def layers(self) -> int:
        return self.plain.shape[0]

    @property
    def heads(self) -> int:
        return self.plain.shape[1]

    def reading(self, reading: str) -> np.ndarray:
        if reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
        return self.plain if reading == "plain" else self.shift

    def matrix(self, reading: str, layer: int | None, head: int | None) -> np.ndarray:
        """(m_words, n_words): one head (1-based layer and head), a layer's mean (head None), or the mean of
        every head (both None)."""
        w = self.reading(reading)
        if layer is None:
            return w.mean(axis=(0, 1))
        if head is None:
            return w[layer - 1].mean(axis=0)
        return w[layer - 1, head - 1]

    def stacked(self, reading: str) -> np.ndarray:
        """(S, m_words, n_words) for every selector in `selectors(L, h)` order."""
        w = self.reading(reading)
        L, h = w.shape[:2]
        return np.concatenate([w.reshape(L * h, *w.shape[2:]), w.mean(axis=1), w.mean(axis=(0, 1))[None]])


def word_attention(cross: np.ndarray, source_pieces: Sequence[str], target_pieces: Sequence[str],
                   source_words: Sequence[str], target_words: Sequence[str], shift: bool = True,
                   specials: Iterable[str] = SPECIAL_PIECES) -> WordAttention:
    """cross (L, h, m, n) over pieces -> WordAttention. target_pieces: the m labels (what each row predicts).
    Raises WordMismatch if the pieces do not group into the given words."""
    cross = np.asarray(cross, dtype=np.float64)
    L, h, m, n = cross.shape
    if len(source_pieces) != n or len(target_pieces) != m:
        raise ValueError(f"cross-attention is {m} x {n} but there are {len(target_pieces)} target and "
                         f"{len(source_pieces)} source pieces")
    specials = frozenset(specials)
    src_groups = word_groups(source_pieces, specials)
    tgt_groups = word_groups(target_pieces, specials)
    check_words(src_groups, source_pieces, source_words, "source")
    check_words(tgt_groups, target_pieces, target_words, "target")
    keys = pooling(src_groups, n, mean=False).T  # (n, n_words)
    out = {}
    for reading in READINGS:
        rows = pooling(query_rows(tgt_groups, m, reading, shift), m, mean=True)  # (m_words, m)
        out[reading] = rows @ cross @ keys  # (L, h, m_words, n_words)
    return WordAttention(tuple(source_words), tuple(target_words), out["plain"], out["shift"])


def trace_word_attention(trace: Trace, target_words: Sequence[str] | None = None,
                         specials: Iterable[str] = SPECIAL_PIECES) -> WordAttention:
    """WordAttention of a teacher-forced Trace. Source words: the normalised source the trace records;
    target words: given, or read back from the target pieces."""
    source_words = str(trace.options.get("normalised_source", "")).split()
    specials = frozenset(specials)
    if target_words is None:
        target_words = [_join([trace.target_tokens[k] for k in g])
                        for g in word_groups(trace.target_tokens, specials)]
    return word_attention(trace.cross_attention, trace.source_tokens, trace.target_tokens, source_words,
                          target_words, shift=bool(trace.options.get("shift", True)), specials=specials)


def _join(pieces: Sequence[str]) -> str:
    text = "".join(p[2:] if p.startswith(CONTINUATION) else p for p in pieces)
    return text.lstrip("".join(WORD_STARTS))


# ---- extraction --------------------------------------------------------------------------------------------
def _onehot_argmax(w: np.ndarray, axis: int) -> np.ndarray:
    """Boolean (…, m, n): True at the argmax along `axis`, where that line has any weight."""
    idx = np.expand_dims(w.argmax(axis=axis), axis)
    out = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(out, idx, True, axis=axis)
    return out & (w.max(axis=axis, keepdims=True) > 0)


def extract(w: np.ndarray, how: str, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """w (…, m_words, n_words) -> boolean links of the same shape ([target word, source word])."""
    if how == "argmax":
        return _onehot_argmax(w, -1)
    if how == "threshold":
        return w >= threshold
    if how == "inter":
        return _onehot_argmax(w, -1) & _onehot_argmax(w, -2)
    if how == "union":
        return _onehot_argmax(w, -1) | _onehot_argmax(w, -2)
    raise ValueError(f"extraction must be one of {EXTRACTS}, got {how!r}")


def links_of(mask: np.ndarray) -> list[Link]:
    """Boolean (m_words, n_words) -> [(source, target), ...]."""
    return [(int(s), int(t)) for t, s in zip(*np.nonzero(mask))]


# ---- methods -----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Method:
    extract: str = "argmax"
    reading: str = DEFAULT_READING
    layer: int | None = None  # 1-based; None: the mean over layers
    head: int | None = None  # 1-based; None: the mean over the layer's heads
    threshold: float = DEFAULT_THRESHOLD

    def __post_init__(self) -> None:
        if self.extract not in EXTRACTS:
            raise ValueError(f"extraction must be one of {EXTRACTS}, got {self.extract!r}")
        if self.reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {self.reading!r}")
        if self.head is not None and self.layer is None:
            raise ValueError("a head needs a layer")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")

    @property
    def selector(self) -> str:
        if self.layer is None:
            return "mean"
        return f"layer{self.layer}" if self.head is None else f"L{self.layer}H{self.head}"

    @property
    def name(self) -> str:
        how = f"threshold{self.threshold:g}" if self.extract == "threshold" else self.extract
        return f"{how}-{self.reading}-{self.selector}"

    def check(self, layers: int, heads: int) -> None:
        if self.layer is not None and not 1 <= self.layer <= layers:
            raise ValueError(f"{self.name}: layer must be 1..{layers} (1-based)")
        if self.head is not None and not 1 <= self.head <= heads:
            raise ValueError(f"{self.name}: head must be 1..{heads} (1-based)")

    def links(self, wa: WordAttention) -> list[Link]:
        return links_of(extract(wa.matrix(self.reading, self.layer, self.head), self.extract, self.threshold))

    @classmethod
    def parse(cls, name: str) -> Method:
        """`argmax-shift-L2H1`, `threshold0.2-plain-layer2`, `union-mean`, `argmax` ... (parts after the
        extraction are optional: reading defaults to DEFAULT_READING, the selector to `mean`)."""
        parts = name.strip().split("-")
        match = re.fullmatch(r"(argmax|inter|union|threshold)([0-9.]*)", parts[0])
        if not match or (match.group(2) and match.group(1) != "threshold") or len(parts) > 3:
            raise ValueError(f"unknown method {name!r}: expected EXTRACT[-READING][-SELECTOR] with EXTRACT one of "
                             f"argmax, threshold[TAU], inter, union; READING plain or shift; SELECTOR LxHy, layerN "
                             f"or mean (e.g. argmax-shift-L2H1), or 'best'")
        kw: dict[str, Any] = {"extract": match.group(1)}
        if match.group(2):
            try:
                kw["threshold"] = float(match.group(2))
            except ValueError:
                raise ValueError(f"{name!r}: bad threshold {match.group(2)!r}") from None
        rest = parts[1:]
        if rest and rest[0] in READINGS:
            kw["reading"] = rest.pop(0)
        if rest:
            sel = rest.pop(0)
            head = re.fullmatch(r"L(\d+)H(\d+)", sel)
            layer = re.fullmatch(r"layer(\d+)", sel)
            if head:
                kw["layer"], kw["head"] = int(head.group(1)), int(head.group(2))
            elif layer:
                kw["layer"] = int(layer.group(1))
            elif sel != "mean":
                raise ValueError(f"{name!r}: selector {sel!r} is not LxHy, layerN or mean (or the reading is not "
                                 f"plain / shift)")
        if rest:
            raise ValueError(f"{name!r}: unexpected {'-'.join(rest)!r}")
        return cls(**kw)


def selectors(layers: int, heads: int) -> list[tuple[int | None, int | None]]:
    """(layer, head), 1-based, in WordAttention.stacked order: every head, every layer mean, the overall mean."""
    return ([(li, hi) for li in range(1, layers + 1) for hi in range(1, heads + 1)]
            + [(li, None) for li in range(1, layers + 1)] + [(None, None)])


def candidates(layers: int, heads: int, thresholds: Sequence[float] = SEARCH_THRESHOLDS) -> list[Method]:
    """Every method the scorer counts at once: extractions (thresholds as given) x readings x selectors."""
    extracts = [("argmax", DEFAULT_THRESHOLD), ("inter", DEFAULT_THRESHOLD), ("union", DEFAULT_THRESHOLD)]
    extracts += [("threshold", t) for t in thresholds]
    return [Method(e, r, li, hi, t) for e, t in extracts for r in READINGS for li, hi in selectors(layers, heads)]


# ---- scoring a corpus --------------------------------------------------------------------------------------
def gold_matrices(gold: Gold, m_words: int, n_words: int) -> tuple[np.ndarray, np.ndarray]:
    """(sure, possible) boolean (m_words, n_words), [target, source]."""
    sure = np.zeros((m_words, n_words), dtype=bool)
    possible = np.zeros((m_words, n_words), dtype=bool)
    for i, j in gold.sure:
        sure[j, i] = True
    for i, j in gold.possible:
        possible[j, i] = True
    return sure, possible


@dataclass
class Tally:
    """Counts of every candidate method, summed over sentences. counts[k] = (|A|, |S|, |A&S|, |A&P|)."""

    layers: int
    heads: int
    thresholds: tuple[float, ...] = SEARCH_THRESHOLDS
    counts: np.ndarray = field(init=False)
    n: int = 0

    def __post_init__(self) -> None:
        self.methods = candidates(self.layers, self.heads, self.thresholds)
        self.index = {meth.name: k for k, meth in enumerate(self.methods)}
        self.counts = np.zeros((len(self.methods), 4), dtype=np.int64)

    def add(self, wa: WordAttention, gold: Gold) -> None:
        if (wa.layers, wa.heads) != (self.layers, self.heads):
            raise ValueError(f"a sentence has {wa.layers}x{wa.heads} heads, the tally {self.layers}x{self.heads}")
        sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
        blocks = []
        stacked = {reading: wa.stacked(reading) for reading in READINGS}  # (S, m, n) each
        for how, tau in [("argmax", 0.0), ("inter", 0.0), ("union", 0.0)] + [("threshold", t)
                                                                            for t in self.thresholds]:
            for reading in READINGS:
                a = extract(stacked[reading], how, tau)
                blocks.append(np.stack([a.sum(axis=(1, 2)), np.full(len(a), sure.sum()),
                                        (a & sure).sum(axis=(1, 2)), (a & possible).sum(axis=(1, 2))], axis=1))
        self.counts += np.concatenate(blocks)
        self.n += 1

    def __getitem__(self, method: Method | str) -> Counts:
        name = method if isinstance(method, str) else method.name
        if name not in self.index:
            raise KeyError(f"{name} was not counted (thresholds counted: {self.thresholds})")
        return Counts(*(int(x) for x in self.counts[self.index[name]]))

    def best(self, reading: str | None = None) -> Method:
        """The counted method with the lowest AER (ties: the first in candidate order)."""
        aer = np.array([Counts(*c).aer for c in self.counts])
        if reading is not None:
            aer = np.where([meth.reading == reading for meth in self.methods], aer, np.inf)
        return self.methods[int(np.argmin(aer))]


# ---- running an engine over a corpus -----------------------------------------------------------------------
def engine_specials(engine: Engine) -> frozenset[str]:
    """Piece strings of the engine's special ids (both vocabularies), plus `<s>`, `</s>`, `<pad>`; the
    unknown token stands for a word the vocabulary lacks, so it stays a word piece."""
    ids = engine.special_ids()
    out = set(SPECIAL_PIECES) | {engine.piece(i) for i in ids}
    source_piece = getattr(engine, "source_piece", None)
    if source_piece is not None:
        out |= {source_piece(i) for i in ids}
    unk = getattr(getattr(engine, "tokenizer", None), "unk_token", None)
    return frozenset(out - UNKNOWN_PIECES - {unk})


def _runs(engine: Engine, srcs: list[list[int]], labels: list[list[int]], causal: bool, shift: bool) -> list[RawRun]:
    """Teacher-forced runs, batched when the engine is ours (one padded pass), one by one otherwise."""
    if getattr(engine, "family", "") == "builtin" and hasattr(engine, "model"):
        from model.decoding import teacher_forced_batch

        return teacher_forced_batch(engine.model, srcs, labels, causal, shift)
    return [engine.run_teacher_forced(s, lab, causal, shift) for s, lab in zip(srcs, labels)]


@dataclass(frozen=True)
class Aligned:
    """One sentence: its word attention, or why it could not be aligned."""

    index: int
    attention: WordAttention | None
    error: str = ""


def align_corpus(engine: Engine, examples: Sequence[Example], batch_size: int = 32, progress: bool = True,
                 causal: bool | None = None, shift: bool | None = None) -> Iterator[Aligned]:
    """Teacher-force each example's target (in the setting the model was trained with, from its card, unless
    given) and yield its WordAttention, in order. Sentences whose pieces do not line up with their words, or
    that the model cannot read, are yielded with an error instead."""
    from tqdm import tqdm

    from model.engine import ModelInputError

    causal = engine.card.get("trained_causal", True) if causal is None else causal
    shift = engine.card.get("trained_shift", True) if shift is None else shift
    specials = engine_specials(engine)
    bar = tqdm(total=len(examples), desc="aligning", unit="sent", disable=not progress, leave=False)
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        ready, failed = [], []
        for k, ex in enumerate(chunk, start):
            try:
                normalised, src_ids, src_pieces, warnings = engine.prepare_source(ex.source)
                if warnings:
                    raise ModelInputError(warnings[0])
                target = engine.normalise_target(ex.target)
                labels = engine.encode_target(target)
            except (ModelInputError, ValueError) as exc:
                failed.append(Aligned(k, None, str(exc)))
                continue
            ready.append((k, src_ids, src_pieces, normalised.split(), labels, target.split()))
        runs = _runs(engine, [r[1] for r in ready], [r[4] for r in ready], causal, shift) if ready else []
        out = list(failed)
        for (k, _, src_pieces, src_words, labels, tgt_words), run in zip(ready, runs):
            try:
                wa = word_attention(run.cross_attn, src_pieces, [engine.piece(i) for i in labels], src_words,
                                    tgt_words, shift=shift, specials=specials)
                out.append(Aligned(k, wa))
            except WordMismatch as exc:
                out.append(Aligned(k, None, str(exc)))
        yield from sorted(out, key=lambda a: a.index)
        bar.update(len(chunk))
    bar.close()


@dataclass
class Report:
    """Everything `align` prints: the tally on the scored sentences, the predicted links, what was skipped."""

    tally: Tally | None
    links: dict[int, list[Link]]  # sentence index -> links of the chosen method
    method: Method
    skipped: list[tuple[int, str]]
    n: int
    n_gold: int
    selection: dict[str, Any] = field(default_factory=dict)
    held_out: Tally | None = None  # `best`: the tally of the sentences the choice was NOT made on

    def summary(self) -> dict[str, Any]:
        """The DESIGN.md `align --json` object, plus `readings`, `selection`, `skipped`."""
        out: dict[str, Any] = {"n": self.n, "n_scored": self.n_gold, "method": self.method.name}
        scored = self.held_out or self.tally
        if scored is None or scored.n == 0:
            out.update(aer=None, precision=None, recall=None, heads=[], readings={},
                       note="no gold links in the file: links extracted, metrics skipped")
        else:
            out.update(scored[self.method].as_dict())
            m = self.method
            out["heads"] = [{"layer": li, "head": hi, "aer": self.tally[Method(m.extract, m.reading, li, hi,
                                                                                m.threshold)].aer}
                            for li, hi in selectors(self.tally.layers, self.tally.heads) if hi is not None]
            out["readings"] = {}
            for reading in READINGS:
                if self.selection:  # `best`: the best method of each reading, chosen and reported as above
                    pick = self.selection["per_reading"][reading]
                else:
                    pick = Method(m.extract, reading, m.layer, m.head, m.threshold)
                out["readings"][reading] = {"method": pick.name if isinstance(pick, Method) else pick,
                                            **scored[pick].as_dict()}
        if self.selection:
            out["selection"] = {k: v for k, v in self.selection.items() if k != "per_reading"}
        out["skipped"] = [{"index": i, "reason": r} for i, r in self.skipped]
        return out


def _golds(examples: Sequence[Example], what: str = "sentence") -> dict[int, Gold]:
    """Parsed gold links of the examples that have any; ValueError naming the sentence otherwise."""
    golds: dict[int, Gold] = {}
    for k, ex in enumerate(examples):
        if ex.gold.strip():
            try:
                golds[k] = parse_pharaoh(ex.gold)
                golds[k].check(len(ex.source.split()), len(ex.target.split()))
            except ValueError as exc:
                raise ValueError(f"{what} {k + 1}: {exc}") from None
    return golds


def _fits(wa: WordAttention, ex: Example) -> bool:
    """The engine's normalised words are as many as the file's, so gold indices point at the same words."""
    return len(wa.source_words) == len(ex.source.split()) and len(wa.target_words) == len(ex.target.split())


MISFIT = "normalising the sentence changed its number of words, so the gold indices would not match"


def run_alignment(engine: Engine, examples: Sequence[Example], method: str = DEFAULT_METHOD,
                  batch_size: int = 32, progress: bool = True,
                  select_on: Sequence[Example] | None = None) -> Report:
    """Align every example and count every candidate method against its gold links (when it has any).

    `best` picks the lowest-AER method: on `select_on` when given (other sentences with gold, e.g. a valid
    split), its scores then reported on all of `examples`; otherwise, with 20 or more gold sentences, on the
    first half, scores reported on the second half (a held-out estimate); with fewer, chosen and reported on
    the same sentences, and the report says so."""
    chosen = None if method == BEST else Method.parse(method)
    thresholds = SEARCH_THRESHOLDS
    if chosen is not None:
        chosen.check(engine.n_decoder_layers, engine.n_heads)
        if chosen.threshold not in thresholds:
            thresholds = (*thresholds, chosen.threshold)

    def new() -> Tally:
        return Tally(engine.n_decoder_layers, engine.n_heads, thresholds)

    golds = _golds(examples)
    pre = None
    if chosen is None and select_on is not None:
        pre_golds = _golds(select_on, "selection sentence")
        pre = new()
        for item in align_corpus(engine, select_on, batch_size, progress):
            if item.attention is not None and item.index in pre_golds and _fits(item.attention,
                                                                                select_on[item.index]):
                pre.add(item.attention, pre_golds[item.index])
        if pre.n == 0:
            raise ValueError("no sentence of the selection data has gold links this model could align")
    split = len(golds) // 2 if (chosen is None and pre is None and len(golds) >= 20) else None
    first_half = set(sorted(golds)[:split])
    tally = new()
    select, held = (new(), new()) if split is not None else (None, None)
    kept: dict[int, WordAttention] = {}
    skipped: list[tuple[int, str]] = []
    for item in align_corpus(engine, examples, batch_size, progress):
        if item.attention is None or not _fits(item.attention, examples[item.index]):
            skipped.append((item.index, item.error or MISFIT))
            continue
        kept[item.index] = wa = item.attention
        if item.index in golds:
            tally.add(wa, golds[item.index])
            if split is not None:
                (select if item.index in first_half else held).add(wa, golds[item.index])
    selection: dict[str, Any] = {}
    if chosen is None:
        pick_from = pre or select or tally
        if pick_from.n == 0:
            chosen = Method.parse(DEFAULT_METHOD)
            selection = {"note": f"no gold links: 'best' cannot choose, so {DEFAULT_METHOD} was used"}
        else:
            chosen = pick_from.best()
            if pre is not None:
                selection = {"chosen_on": pre.n, "reported_on": tally.n,
                             "note": "best method chosen on separate selection sentences, scores reported on "
                                     "these"}
            elif split is not None:
                selection = {"chosen_on": select.n, "reported_on": held.n,
                             "note": "best method chosen on the first half of the gold sentences, scores reported "
                                     "on the second half"}
            else:
                selection = {"chosen_on": tally.n, "reported_on": tally.n,
                             "note": "best method chosen and scored on the same sentences (fewer than 20 with "
                                     "gold): an optimistic, in-sample figure"}
            if tally.n:
                selection["in_sample_aer"] = tally[chosen].aer
            selection["per_reading"] = {r: pick_from.best(r) for r in READINGS}
    links = {k: chosen.links(wa) for k, wa in kept.items()}
    return Report(tally if tally.n else None, links, chosen, skipped, len(examples), tally.n, selection, held)
