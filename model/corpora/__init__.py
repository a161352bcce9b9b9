"""Generated parallel corpora with gold word alignments (docs/corpus.md): en-fr and de-en."""

from .example import Example, read_tsv, write_tsv
from .splits import PAIRS, generate

__all__ = ["PAIRS", "Example", "generate", "read_tsv", "write_tsv"]
