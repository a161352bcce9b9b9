"""SentencePiece subword tokenizers: training on a corpus, and a wrapper with the project's special ids."""

from __future__ import annotations

import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import sentencepiece as spm
from attention_lens.model.builtin.config import BOS_ID, EOS_ID, PAD_ID, UNK_ID

WORD_START = "\u2581"  # SentencePiece marks the first piece of every word with "▁"


@dataclass(frozen=True)
class Tokenized:
    ids: tuple[int, ...]
    pieces: tuple[str, ...]


class SubwordTokenizer:
    """One SentencePiece model. pad=0, unk=1, bos=2, eos=3 (the ids in ModelConfig)."""

    def __init__(self, model_proto: bytes, name: str = "tokenizer") -> None:
        self.name = name
        self.sp = spm.SentencePieceProcessor()
        try:
            self.sp.LoadFromSerializedProto(model_proto)
        except (RuntimeError, OSError, TypeError) as exc:
            raise ValueError(f"{name}: not a valid SentencePiece model ({exc})") from exc
        specials = (self.sp.pad_id(), self.sp.unk_id(), self.sp.bos_id(), self.sp.eos_id())
        if specials != (PAD_ID, UNK_ID, BOS_ID, EOS_ID):
            raise ValueError(f"{name}: special ids {specials} differ from pad/unk/bos/eos = 0/1/2/3")
        self.model_proto = model_proto

    @classmethod
    def from_file(cls, path: Path) -> SubwordTokenizer:
        path = Path(path)
        if not path.is_file():
            raise ValueError(f"missing tokenizer file {path}")
        return cls(path.read_bytes(), name=str(path))

    def save(self, path: Path) -> None:
        Path(path).write_bytes(self.model_proto)

    @property
    def vocab_size(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, text: str) -> Tokenized:
        # SentencePiece takes UTF-8: a lone surrogate (e.g. from undecodable argv bytes) becomes U+FFFD.
        text = text if text.isascii() else text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
        ids = tuple(self.sp.encode(text))
        return Tokenized(ids, tuple(self.sp.id_to_piece(list(ids))))  # its own ids: in range, one call for all

    def _check(self, i: int) -> int:
        if not 0 <= int(i) < self.vocab_size:
            raise ValueError(f"{self.name}: token id {i} is outside the vocabulary (0..{self.vocab_size - 1})")
        return int(i)

    def piece(self, i: int) -> str:
        return self.sp.id_to_piece(self._check(i))

    def piece_to_id(self, piece: str) -> int:
        """The id of a piece (the unknown id when the vocabulary has no such piece)."""
        return int(self.sp.piece_to_id(piece))

    def decode(self, ids: Iterable[int]) -> str:
        return self.sp.decode([self._check(i) for i in ids if int(i) not in (PAD_ID, BOS_ID, EOS_ID)])

    def words(self) -> set[str]:
        """Every whole word the vocabulary holds as a single piece (used to restore German noun capitals)."""
        out = set()
        for i in range(self.vocab_size):
            p = self.sp.id_to_piece(i)
            if p.startswith(WORD_START) and len(p) > 1:
                out.add(p[1:])
        return out


def train_tokenizer(sentences: Iterable[str], vocab_size: int, raw_text: bool = False) -> SubwordTokenizer:
    """Train a BPE SentencePiece model in memory. The vocabulary grows only as far as the text allows
    (hard_vocab_limit off), so a small corpus keeps every frequent word as one piece and the heatmaps show
    words; unseen words still fall back to smaller pieces. (SentencePiece's unigram trainer, asked for more
    pieces than a 100-word corpus supports, stops at about 110 pieces of two or three letters: measured.)"""
    sentences = list(sentences)
    # SentencePiece refuses a vocabulary smaller than the characters it must keep (plus 256 byte pieces
    # with byte fallback and the 4 special pieces): a small request grows to that floor.
    floor = len({ch for text in sentences for ch in text if not ch.isspace()}) + (256 if raw_text else 0) + 8
    buffer = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(sentences), model_writer=buffer, vocab_size=max(vocab_size, floor),
        model_type="bpe", character_coverage=1.0, hard_vocab_limit=False,
        normalization_rule_name="nmt_nfkc" if raw_text else "identity",
        pad_id=PAD_ID, unk_id=UNK_ID, bos_id=BOS_ID, eos_id=EOS_ID,
        pad_piece="<pad>", unk_piece="<unk>", bos_piece="<s>", eos_piece="</s>",
        num_threads=2, minloglevel=2, byte_fallback=raw_text,
    )
    return SubwordTokenizer(buffer.getvalue(), name="trained tokenizer")
