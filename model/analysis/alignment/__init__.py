"""Word alignments from cross-attention, scored against gold links (precision, recall, AER).

Modules: `links` (Pharaoh links and the metrics), `words` (pieces to words, word attention), `methods` (link
extraction and method names), `scoring` (every method counted at once: `Tally`), `sentence_attention` (an engine over
batches of sentences: each sentence's word attention under each weights, sinks), `corpus_stream` (the sentences align
reads: a list, or a TSV file or shard streamed), `corpus` (an engine over a corpus: every method counted,
`run_alignment`), `best` (`--method best`: the sentences it is chosen on, the choice), `report` (the `align` report,
per-sentence counts), `merge` (shards' reports added up), `sentences` (per-sentence counts kept compactly and
streamed), `gradient` (the gradient reading: word saliency), `gold_cells` (gold word links placed on a run's piece
cells), `card` (the head table kept in card.json), `uploads` (a user's test file, read as a stream), `upload_counts`
(what an upload keeps: every method's breakdown and the heads' agreement, per-sentence counts spilled). The rules
they follow:

**Pieces to words.** Attention is over subword pieces; gold links are over the whitespace tokens of the
normalised sentence (docs/corpus.md). Pieces are grouped into words by one rule, the same on both sides:

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
`links_file`: a Pharaoh links file any aligner wrote, scored with the same code as the heads; `breakdown`: precision
and recall by kind of source word, length and reordering distance, omissions and attention sinks.
"""

from attention_lens.model.analysis.alignment.breakdown import OMISSION_MASS, Breakdown, WordStats
from attention_lens.model.analysis.alignment.card import CARD_HEADS, CARD_HEADS_N, card_heads, report_from_card
from attention_lens.model.analysis.alignment.corpus import run_alignment
from attention_lens.model.analysis.alignment.corpus_stream import MemoryCorpus
from attention_lens.model.analysis.alignment.links import (
    Counts,
    Gold,
    Link,
    count,
    format_pharaoh,
    parse_pharaoh,
    scores,
)
from attention_lens.model.analysis.alignment.methods import (
    BEST,
    DEFAULT_METHOD,
    DEFAULT_READING,
    DEFAULT_THRESHOLD,
    EXTRACTS,
    SEARCH_THRESHOLDS,
    Method,
    candidates,
    extract,
    links_of,
    selectors,
)
from attention_lens.model.analysis.alignment.report import Report, SentenceScore, summed
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.sentence_attention import (
    Aligned,
    align_batches,
    align_corpus,
    engine_specials,
)
from attention_lens.model.analysis.alignment.uploads import UploadReport, align_upload, parse_tsv, shown_problems
from attention_lens.model.analysis.alignment.words import (
    CONTINUATION,
    READINGS,
    SPECIAL_PIECES,
    UNKNOWN_PIECES,
    WORD_STARTS,
    WordAttention,
    WordMismatch,
    check_words,
    pooling,
    query_rows,
    trace_word_attention,
    word_attention,
    word_groups,
)

__all__ = ["OMISSION_MASS", "Breakdown", "WordStats", "MemoryCorpus", "SentenceScore", "align_batches", "summed",
           "BEST", "CARD_HEADS", "CARD_HEADS_N", "card_heads", "report_from_card",
           "CONTINUATION", "DEFAULT_METHOD", "DEFAULT_READING", "DEFAULT_THRESHOLD", "EXTRACTS", "READINGS",
           "SEARCH_THRESHOLDS", "SPECIAL_PIECES", "UNKNOWN_PIECES", "WORD_STARTS", "Aligned", "Counts", "Gold",
           "Link", "Method", "Report", "Tally", "UploadReport", "WordAttention", "WordMismatch", "align_corpus",
           "align_upload", "candidates", "check_words", "count", "engine_specials", "extract", "format_pharaoh",
           "gold_matrices", "links_of", "parse_pharaoh", "parse_tsv", "pooling", "query_rows", "run_alignment",
           "scores", "selectors", "shown_problems", "trace_word_attention", "word_attention", "word_groups"]
