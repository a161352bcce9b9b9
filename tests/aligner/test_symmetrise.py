"""Symmetrisation against a hand-worked example (6 source x 6 target words).

forward (each target word's source): (0,0) (1,1) (2,2) (3,4); reverse: (0,0) (2,2) (2,3) (4,2) (5,5).
Worked by hand from Koehn's definition:
- intersection {(0,0), (2,2)}; union: all seven links.
- grow (side neighbours): (2,3) is beside (2,2) and target word 3 is free -> added. (1,1) touches (0,0) and
  (2,2) only diagonally, (3,4) touches (2,3) only diagonally: not added.
- grow-diag: from (0,0) the diagonal (1,1) (source 1 free); from (2,2) the side (2,3) (target 3 free); from
  (2,3), visited in the same pass, the diagonal (3,4) (source 3 free). (4,2) and (5,5) touch no link.
- grow-diag-final: then FINAL(forward) adds nothing new, FINAL(reverse) adds (4,2) (source 4 free although
  target 2 is aligned) and (5,5).
- grow-diag-final-and: FINAL-AND needs both words free: (5,5) only.
"""

import pytest
from attention_lens.model.aligner import HEURISTICS, combine, symmetrise

FORWARD = {(0, 0), (1, 1), (2, 2), (3, 4)}
REVERSE = {(0, 0), (2, 2), (2, 3), (4, 2), (5, 5)}
GROW_DIAG = {(0, 0), (1, 1), (2, 2), (2, 3), (3, 4)}
EXPECTED = {
    "intersection": {(0, 0), (2, 2)},
    "union": FORWARD | REVERSE,
    "grow": {(0, 0), (2, 2), (2, 3)},
    "grow-diag": GROW_DIAG,
    "grow-diag-final": GROW_DIAG | {(4, 2), (5, 5)},
    "grow-diag-final-and": GROW_DIAG | {(5, 5)},
}


@pytest.mark.parametrize("heuristic", HEURISTICS)
def test_hand_worked_example(heuristic):
    assert symmetrise(FORWARD, REVERSE, heuristic) == EXPECTED[heuristic]


def test_every_heuristic_is_worked():
    assert set(EXPECTED) == set(HEURISTICS)


def test_a_union_link_between_two_aligned_words_is_not_grown():
    # (1,1) is beside (0,1) and (1,0), but both its words are already aligned when growing reaches it.
    forward = {(0, 1), (1, 0), (1, 1)}
    reverse = {(0, 1), (1, 0)}
    assert symmetrise(forward, reverse, "grow-diag") == {(0, 1), (1, 0)}
    assert symmetrise(forward, reverse, "grow-diag-final") == {(0, 1), (1, 0)}


def test_combine_directions_and_unknown_heuristic():
    assert combine([FORWARD], [REVERSE], "forward") == [FORWARD]
    assert combine([FORWARD], [REVERSE], "reverse") == [REVERSE]
    with pytest.raises(ValueError, match="grow-diag-final-and"):
        symmetrise(FORWARD, REVERSE, "gdfa")
