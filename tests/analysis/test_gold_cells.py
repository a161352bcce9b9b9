"""Gold word links placed on the cells of a cross-attention picture over pieces (what Explore draws for a sentence
opened from the Alignment page), worked by hand."""

from __future__ import annotations

from attention_lens.model.analysis.alignment.gold_cells import gold_cells

SRC = ["▁the", "▁black", "▁ca", "t", "▁sat", "</s>"]  # words: the, black, cat (pieces 2, 3), sat
TGT = ["▁le", "▁chat", "▁noir", "▁s'", "as", "sit", "</s>"]  # words: le, chat, noir, s'assit (pieces 3-5)


def test_each_link_marks_every_piece_cell_of_its_two_words():
    got = gold_cells("0-0 2-1 1-2 3?3", "the black cat sat", "le chat noir s'assit", SRC, TGT,
                     specials={"</s>"})
    assert got["links"] == [[0, 0, 1], [1, 2, 1], [2, 1, 1], [3, 3, 0]]
    # plain reading: row k predicts target piece k
    assert got["cells"] == [[0, 0, 1], [1, 2, 1], [1, 3, 1], [2, 1, 1], [3, 4, 0], [4, 4, 0], [5, 4, 0]]


def test_the_shift_reading_moves_each_word_to_the_rows_that_read_it():
    got = gold_cells("2-1 3?3", "the black cat sat", "le chat noir s'assit", SRC, TGT, reading="shift",
                     specials={"</s>"})
    assert got["cells"] == [[2, 2, 1], [2, 3, 1], [4, 4, 0], [5, 4, 0], [6, 4, 0]]


def test_words_split_by_normalising_cover_all_their_parts_and_bad_links_give_none():
    src = ["▁the", "▁cat", "▁sat", "▁.", "</s>"]  # the text's "sat." normalised to "sat ."
    got = gold_cells("2-0", "the cat sat.", "assis", src, ["▁assis", "</s>"], specials={"</s>"})
    assert got["cells"] == [[0, 2, 1], [0, 3, 1]]
    assert gold_cells("5-0", "the cat sat.", "assis", src, ["▁assis", "</s>"], specials={"</s>"}) is None
