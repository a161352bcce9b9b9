"""An engine over batches of sentences: each teacher-forced (in the setting the model was trained with), its
pieces grouped into words, its word attention read under every weights asked for, its attention sinks
counted (`Aligned`, `align_batches`, `align_corpus`)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
from attention_lens.model.analysis.alignment.breakdown import is_punctuation
from attention_lens.model.analysis.alignment.methods import CONTRIBUTION_KEYS
from attention_lens.model.analysis.alignment.words import (
    SPECIAL_PIECES,
    UNKNOWN_PIECES,
    WORD_STARTS,
    WordAttention,
    WordMismatch,
    word_attention,
    word_groups,
)
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.ahead import ahead
from attention_lens.model.engine.contributions import contributions

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine import Engine


def engine_specials(engine: Engine) -> frozenset[str]:
    """Piece strings of the engine's special ids (both vocabularies), plus `<s>`, `</s>`, `<pad>`; the
    unknown token stands for a word the vocabulary lacks, so it stays a word piece."""
    return frozenset((SPECIAL_PIECES | engine.special_pieces()) - UNKNOWN_PIECES - engine.unknown_pieces())


@dataclass(frozen=True)
class Aligned:
    """One sentence: its word attention, or why it could not be aligned. `pieces`: how many subword pieces
    each source word has; `sinks` (2, L, h): each head's raw cross-attention mass on special pieces and on
    punctuation pieces, summed over the sentence's `rows` decoder rows. `readings`: the word attention under
    every weights asked for (`attention` is the first's); `unavailable`: weights the model cannot give, and why."""

    index: int
    attention: WordAttention | None
    error: str = ""
    pieces: tuple[int, ...] = ()
    sinks: np.ndarray | None = None
    rows: int = 0
    readings: dict[str, WordAttention] = field(default_factory=dict)
    unavailable: dict[str, str] = field(default_factory=dict)


class _Item(Protocol):
    source: str
    target: str


def _sinks(cross: np.ndarray, pieces: Sequence[str], specials: frozenset[str],
           kinds: dict[str, tuple[bool, bool]] | None = None) -> np.ndarray:
    """(2, L, h): mass on special pieces and on punctuation pieces, summed over the rows. kinds: (special,
    punctuation) of pieces already looked at, filled as pieces are (any dict: a memo)."""
    kinds = {} if kinds is None else kinds
    for p in pieces:
        if p not in kinds:
            kinds[p] = (p in specials, p not in specials and is_punctuation(p.lstrip("".join(WORD_STARTS))))
    special = np.array([kinds[p][0] for p in pieces], dtype=np.float64)
    punct = np.array([kinds[p][1] for p in pieces], dtype=np.float64)
    per_key = np.asarray(cross, dtype=np.float64).sum(axis=2)  # (L, h, n)
    return np.stack([per_key @ special, per_key @ punct])


def _weighted(engine: Engine, run: Any, raw: np.ndarray, options: DecodeOptions, weights: str,
              cache: dict[str, Any]) -> np.ndarray:
    """(L, h, m, n) cross-attention of `run` under `weights` ((1, 1, m, n) for HEADLESS weights); `raw`: its
    cross-attention weights (`run` is None when those are all that was computed)."""
    if weights == "raw":
        return raw
    if weights == "saliency":
        from attention_lens.model.analysis.alignment.gradient import gradient_reading

        return gradient_reading(engine, run, options)
    if "contributions" not in cache:  # norm and rollout from one computation, parts from the same pass
        cache["contributions"] = contributions(run, run.extra.get("parts") or engine.contribution_parts(run, options))
    return cache["contributions"][CONTRIBUTION_KEYS[weights]]["cross_attention"]


def align_batches(engine: Engine, batches: Iterable[Sequence[tuple[int, _Item]]], causal: bool | None = None,
                  shift: bool | None = None, weights: str | Sequence[str] = "raw",
                  workers: int = 0) -> Iterator[Aligned]:
    """Teacher-force each batch of (index, example) (in the setting the model was trained with, from its card,
    unless given) and yield every sentence's Aligned, batch by batch, read under `weights` (one or several:
    Aligned.readings). Sentences whose pieces do not line up with their words, or that the model cannot read,
    are yielded with an error instead; weights after the first that the model cannot give (ModelInputError)
    are left out of `readings` and named in `unavailable`.

    workers >= 1 with the raw weights alone: the batches are tokenised and passed through the model on that
    many threads ahead of the reading here (model.engine.ahead; run torch at one intra-op thread then), the
    same Aligned in the same order."""
    wanted = (weights,) if isinstance(weights, str) else tuple(weights)
    trained_causal, trained_shift = engine.trained_setting
    causal = trained_causal if causal is None else causal
    shift = trained_shift if shift is None else shift
    engine.check_switches(causal, shift)
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift,
                            contributions=any(w in CONTRIBUTION_KEYS for w in wanted))
    specials = engine_specials(engine)
    limit = engine.max_source_tokens
    kinds: dict[str, tuple[bool, bool]] = {}  # each piece's (special, punctuation), for the sinks

    def passed(chunk: Sequence[tuple[int, _Item]]) -> tuple[list[Aligned], list[tuple], list[Any], list[Any]]:
        """The chunk's sentences that could not be read (as Aligned), and the others (their pieces, runs and
        raw cross-attention weights) after one pass."""
        ready, failed = [], []
        for k, ex in chunk:
            try:
                normalised = engine.normalise(ex.source)
                if not normalised.strip():
                    raise ModelInputError("The source text is empty.")
                src_ids, src_pieces = engine.encode_source(normalised)
                if len(src_ids) > limit:  # cut: words lost (a word outside the vocabulary still aligns)
                    raise ModelInputError(f"The source has {len(src_ids)} tokens; this model reads at most {limit}.")
                target = engine.normalise_target(ex.target)
                labels = engine.encode_target(target)
            except (ModelInputError, ValueError) as exc:
                failed.append(Aligned(k, None, str(exc)))
                continue
            ready.append((k, src_ids, src_pieces, normalised.split(), labels, target.split()))
        srcs, labs = [r[1] for r in ready], [r[4] for r in ready]
        if not ready:
            runs, raws = [], []
        elif wanted == ("raw",):  # the attention weights alone: the engine's pass that computes nothing else
            raws = engine.cross_attention_batch(srcs, labs, options)
            runs = [None] * len(raws)
        else:
            runs = engine.teacher_forced_batch(srcs, labs, options)
            raws = [run.cross_attn for run in runs]
        return failed, ready, runs, raws

    for failed, ready, runs, raws in ahead(passed, batches, workers if wanted == ("raw",) else 0):
        if len(kinds) > 100_000:  # bounded whatever the vocabulary
            kinds.clear()
        yield from failed
        for (k, _, src_pieces, src_words, labels, tgt_words), run, raw in zip(ready, runs, raws):
            raw = np.asarray(raw, dtype=np.float64)  # once: the word attention and the sinks both read float64
            readings: dict[str, WordAttention] = {}
            unavailable: dict[str, str] = {}
            cache: dict[str, Any] = {}
            label_pieces = [engine.piece(i) for i in labels]
            try:
                for w in wanted:
                    try:
                        cross = _weighted(engine, run, raw, options, w, cache)
                    except ModelInputError as exc:
                        if w == wanted[0]:
                            raise
                        unavailable[w] = str(exc)
                        continue
                    readings[w] = word_attention(cross, src_pieces, label_pieces, src_words, tgt_words,
                                                 shift=shift, specials=specials)
            except WordMismatch as exc:
                yield Aligned(k, None, str(exc))
                continue
            pieces = tuple(len(g) for g in word_groups(src_pieces, specials))
            yield Aligned(k, readings[wanted[0]], pieces=pieces, sinks=_sinks(raw, src_pieces, specials, kinds),
                          rows=raw.shape[2], readings=readings, unavailable=unavailable)


def align_corpus(engine: Engine, examples: Sequence[Example], batch_size: int = 32, progress: bool = True,
                 causal: bool | None = None, shift: bool | None = None, weights: str = "raw") -> Iterator[Aligned]:
    """align_batches over consecutive batches of `examples`, yielded in order, with a progress bar."""
    from tqdm import tqdm

    bar = tqdm(total=len(examples), desc="aligning", unit="sent", disable=not progress, leave=False)
    for start in range(0, len(examples), batch_size):
        chunk = list(enumerate(examples[start:start + batch_size], start))
        yield from sorted(align_batches(engine, [chunk], causal, shift, weights), key=lambda a: a.index)
        bar.update(len(chunk))
    bar.close()
