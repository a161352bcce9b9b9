"""Generated parallel corpora with gold word alignments (docs/corpus.md): en-fr and de-en, and the TSV files of
sentence pairs.

- `structure`: the abstract sentence every language realises; `sampler`: the random sentences and the reference
  sentences; `lexicon`: the word tables;
- `english`, `french`, `german`: each language's realisation; `tokens`: realised tokens and the gold links that
  follow from them;
- `splits`: train / valid / test and the held-out combination splits (`generate`, `first_test_examples`);
- `grouped_split`: splits of a user's parallel text that keep each sentence on one side;
- `example`: `Example`, and the one reader of a sentence-pair line (`parse_line`) and of TSV files.
"""

from .example import Example, read_tsv, write_tsv
from .splits import PAIRS, first_test_examples, generate

__all__ = ["PAIRS", "Example", "first_test_examples", "generate", "read_tsv", "write_tsv"]
