"""Gold word links placed on a teacher-forced run's cross-attention picture, which is over subword pieces.

A gold link (source word i, target word j; sure or possible) marks every cell (row, column) where column is one of
source word i's pieces and row one of target word j's rows: under the `plain` reading the rows that predict its
pieces (row k predicts target piece k), under `shift` the rows where they are the decoder's input
(query_rows). Words are the pieces grouped by the rule of model.analysis.alignment (word_groups); when the engine's
normalising changed the number of words (`mat.` read as `mat .`), each normalised word is matched to the word of
the text it came from (uploads.word_map), so a word of the gold file covers all of its parts' pieces.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.analysis.alignment.uploads import word_map
from attention_lens.model.analysis.alignment.words import READINGS, _join, query_rows, word_groups


def _words_to_pieces(pieces: Sequence[str], text: str, specials: frozenset[str]) -> list[list[int]] | None:
    """Piece positions of each whitespace word of `text`; None when the pieces cannot be matched to its words."""
    groups = word_groups(pieces, specials)
    words = text.split()
    if len(groups) == len(words):
        return groups
    found = word_map([_join([pieces[k] for k in g]) for g in groups], text)
    if found is None:
        return None
    out: list[list[int]] = [[] for _ in words]
    for g, w in zip(groups, found):
        out[w].extend(g)
    return out


def gold_cells(gold: str, source_text: str, target_text: str, source_pieces: Sequence[str],
               target_pieces: Sequence[str], reading: str = "plain", shift: bool = True,
               specials: Iterable[str] = ()) -> dict[str, Any] | None:
    """Gold links `gold` (Pharaoh over the whitespace words of source_text and target_text) as cells of the
    (m rows = len(target_pieces), n = len(source_pieces)) cross-attention picture: {"cells": [[row, column, 1 sure
    | 0 possible], ...], "links": [[source word, target word, 1 | 0], ...], "source_words", "target_words",
    "reading"}. None when the pieces cannot be matched to the text's words or a link points past them."""
    if reading not in READINGS:
        raise ValueError(f"reading must be one of {READINGS}, got {reading!r}")
    parsed = parse_pharaoh(gold)
    specials = frozenset(specials)
    src = _words_to_pieces(source_pieces, source_text, specials)
    tgt = _words_to_pieces(target_pieces, target_text, specials)
    if src is None or tgt is None:
        return None
    try:
        parsed.check(len(src), len(tgt))
    except ValueError:
        return None
    rows = query_rows(tgt, len(target_pieces), reading, shift)
    cells: dict[tuple[int, int], int] = {}
    links = sorted((i, j, int((i, j) in parsed.sure)) for i, j in parsed.possible)
    for i, j, sure in links:
        for r in rows[j]:
            for c in src[i]:
                cells[(r, c)] = max(cells.get((r, c), 0), sure)
    return {"cells": [[r, c, v] for (r, c), v in sorted(cells.items())], "links": [list(x) for x in links],
            "source_words": source_text.split(), "target_words": target_text.split(), "reading": reading}
