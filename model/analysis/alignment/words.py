"""Pieces to words, and cross-attention at word level under the two readings of a decoder row (the rules:
model.analysis.alignment)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from attention_lens.model.engine.trace import Trace

WORD_STARTS = ("\u2581", "\u0120")  # "▁" SentencePiece, "Ġ" byte-level BPE
CONTINUATION = "##"  # WordPiece
SPECIAL_PIECES = frozenset({"<s>", "</s>", "<pad>"})
UNKNOWN_PIECES = frozenset({"<unk>", "[UNK]"})  # stand for (part of) a word, so never treated as special
READINGS = ("plain", "shift")


class WordMismatch(ValueError):
    """The pieces do not group into as many words as the text has whitespace tokens."""


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
    lengths = [len(g) for g in groups]
    rows = np.repeat(np.arange(len(groups)), lengths)
    cols = [k for g in groups for k in g]
    out[rows, cols] = np.repeat([1.0 / k if k else 0.0 for k in lengths], lengths) if mean else 1.0
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

    def compact(self) -> WordAttention:
        """The same attention in float32 (half the memory; what a page keeps for thousands of sentences)."""
        return WordAttention(self.source_words, self.target_words, self.plain.astype(np.float32),
                             self.shift.astype(np.float32))

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
    source_words = trace.normalised_source.split()
    specials = frozenset(specials)
    if target_words is None:
        target_words = [_join([trace.target_tokens[k] for k in g])
                        for g in word_groups(trace.target_tokens, specials)]
    return word_attention(trace.cross_attention, trace.source_tokens, trace.target_tokens, source_words,
                          target_words, shift=trace.options.shift, specials=specials)


def _join(pieces: Sequence[str]) -> str:
    text = "".join(p[2:] if p.startswith(CONTINUATION) else p for p in pieces)
    return text.lstrip("".join(WORD_STARTS))
