"""SubwordTokenizer.encode names its pieces in one SentencePiece call: the same pieces as naming each id alone."""

from __future__ import annotations

from attention_lens.model.builtin.tokenizer import SubwordTokenizer

from harness.models.tiny import SOURCES, TARGETS


def test_encoded_pieces_are_each_ids_own_piece(tiny_ckpt):
    for name in ("source.model", "target.model"):
        tok = SubwordTokenizer.from_file(tiny_ckpt / name)
        for text in (*SOURCES, *TARGETS, "", "  ", "ünïcödé ?!", "\ud800 lone"):
            got = tok.encode(text)
            assert got.pieces == tuple(tok.piece(i) for i in got.ids)
            assert all(isinstance(p, str) for p in got.pieces)
