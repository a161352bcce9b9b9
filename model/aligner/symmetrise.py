"""Symmetrisation of two directional word alignments (Koehn, Och & Marcu 2003; Koehn's definition as in the
Moses manual, "Symmetrizing word alignments").

Both inputs are sets of (source word, target word) links, 0-based, source first: `s2t` from the aligner that
gives each target word its source word(s) and `t2s` from the reverse direction, already flipped to source
first. The heuristics:

- `intersection`: links in both; high precision.
- `union`: links in either; high recall.
- `grow` / `grow-diag`: start from the intersection; repeat until a pass adds nothing: a pass walks the
  grid in order of source word then target word and, at every link (one added earlier in the same pass
  included), looks at its neighbours (left, right, up, down; `grow-diag`
  also the four diagonals) and add a neighbour that is in the union when its source word or its target
  word is not yet aligned.
- `grow-diag-final`: grow-diag, then FINAL over each direction (s2t first, then t2s): add every link of that
  direction whose source word or target word is still unaligned.
- `grow-diag-final-and`: as grow-diag-final, but FINAL-AND adds a link only when both its source and its
  target word are still unaligned.
"""

from __future__ import annotations

from bisect import insort
from collections.abc import Iterable

Link = tuple[int, int]

SIDE = ((-1, 0), (0, -1), (1, 0), (0, 1))
DIAGONAL = ((-1, -1), (-1, 1), (1, -1), (1, 1))
HEURISTICS = ("intersection", "union", "grow", "grow-diag", "grow-diag-final", "grow-diag-final-and")


def symmetrise(s2t: Iterable[Link], t2s: Iterable[Link], heuristic: str = "grow-diag-final-and") -> set[Link]:
    """One sentence's symmetrised links (module docstring). Raises ValueError for an unknown heuristic."""
    if heuristic not in HEURISTICS:
        raise ValueError(f"symmetrisation heuristic must be one of {', '.join(HEURISTICS)}; got {heuristic!r}")
    a, b = set(s2t), set(t2s)
    if heuristic == "intersection":
        return a & b
    union = a | b
    if heuristic == "union":
        return union
    links = a & b
    aligned_src = {i for i, _ in links}
    aligned_tgt = {j for _, j in links}

    def add(link: Link) -> None:
        links.add(link)
        aligned_src.add(link[0])
        aligned_tgt.add(link[1])

    neighbours = SIDE if heuristic == "grow" else SIDE + DIAGONAL
    grown = True
    while grown:  # one pass visits the links in grid order, a link added ahead of the pass's position included
        grown = False
        order = sorted(links)
        k = 0
        while k < len(order):
            i, j = order[k]
            for di, dj in neighbours:
                cand = (i + di, j + dj)
                if cand in union and cand not in links and (
                        cand[0] not in aligned_src or cand[1] not in aligned_tgt):
                    add(cand)
                    grown = True
                    if cand > order[k]:
                        insort(order, cand)
            k += 1
    if heuristic in ("grow", "grow-diag"):
        return links
    both = heuristic == "grow-diag-final-and"
    for direction in (a, b):
        for i, j in sorted(direction):
            if (i, j) in links:
                continue
            free_src, free_tgt = i not in aligned_src, j not in aligned_tgt
            if (free_src and free_tgt) if both else (free_src or free_tgt):
                add((i, j))
    return links
