"""Running an engine over a corpus: teacher forcing in batches, word attention per sentence, every method
counted, and the `align` report (with the `best` selection held out where it can be)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from attention_lens.model.analysis.alignment.links import Gold, Link, parse_pharaoh
from attention_lens.model.analysis.alignment.methods import (
    BEST,
    CONTRIBUTION_KEYS,
    DEFAULT_METHOD,
    SEARCH_THRESHOLDS,
    Method,
    selectors,
    weights_of,
)
from attention_lens.model.analysis.alignment.scoring import Tally
from attention_lens.model.analysis.alignment.words import (
    READINGS,
    SPECIAL_PIECES,
    UNKNOWN_PIECES,
    WordAttention,
    WordMismatch,
    word_attention,
)
from attention_lens.model.engine import DecodeOptions, ModelInputError
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
    """One sentence: its word attention, or why it could not be aligned."""

    index: int
    attention: WordAttention | None
    error: str = ""


def align_corpus(engine: Engine, examples: Sequence[Example], batch_size: int = 32, progress: bool = True,
                 causal: bool | None = None, shift: bool | None = None, weights: str = "raw") -> Iterator[Aligned]:
    """Teacher-force each example's target (in the setting the model was trained with, from its card, unless
    given) and yield its WordAttention, in order. Sentences whose pieces do not line up with their words, or
    that the model cannot read, are yielded with an error instead."""
    from tqdm import tqdm

    trained_causal, trained_shift = engine.trained_setting
    causal = trained_causal if causal is None else causal
    shift = trained_shift if shift is None else shift
    engine.check_switches(causal, shift)
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift, contributions=weights != "raw")
    specials = engine_specials(engine)
    bar = tqdm(total=len(examples), desc="aligning", unit="sent", disable=not progress, leave=False)
    for start in range(0, len(examples), batch_size):
        chunk = examples[start:start + batch_size]
        ready, failed = [], []
        for k, ex in enumerate(chunk, start):
            try:
                normalised, src_ids, src_pieces, warnings = engine.prepare_source(ex.source)
                if len(engine.encode_source(normalised)[0]) > engine.max_source_tokens:  # cut: words lost
                    raise ModelInputError(warnings[-1])  # (a word outside the vocabulary still aligns)
                target = engine.normalise_target(ex.target)
                labels = engine.encode_target(target)
            except (ModelInputError, ValueError) as exc:
                failed.append(Aligned(k, None, str(exc)))
                continue
            ready.append((k, src_ids, src_pieces, normalised.split(), labels, target.split()))
        runs = engine.teacher_forced_batch([r[1] for r in ready], [r[4] for r in ready], options) if ready else []
        out = list(failed)
        for (k, _, src_pieces, src_words, labels, tgt_words), run in zip(ready, runs):
            try:
                cross = run.cross_attn if weights == "raw" else contributions(  # parts from the same pass
                    run, run.extra.get("parts") or engine.contribution_parts(run, options)
                )[CONTRIBUTION_KEYS[weights]]["cross_attention"]
                wa = word_attention(cross, src_pieces, [engine.piece(i) for i in labels], src_words,
                                    tgt_words, shift=shift, specials=specials)
                out.append(Aligned(k, wa))
            except WordMismatch as exc:
                out.append(Aligned(k, None, str(exc)))
        yield from sorted(out, key=lambda a: a.index)
        bar.update(len(chunk))
    bar.close()


@dataclass
class Report:
    """Everything `align` prints: the tally on the scored sentences, the predicted links, what was skipped."""

    tally: Tally | None
    links: dict[int, list[Link]]  # sentence index -> links of the chosen method
    method: Method
    skipped: list[tuple[int, str]]
    n: int
    n_gold: int
    selection: dict[str, Any] = field(default_factory=dict)
    held_out: Tally | None = None  # `best`: the tally of the sentences the choice was NOT made on

    def summary(self) -> dict[str, Any]:
        """The docs/formats.md `align --json` object, plus `readings`, `selection`, `skipped`."""
        out: dict[str, Any] = {"n": self.n, "n_scored": self.n_gold, "method": self.method.name}
        scored = self.held_out or self.tally
        if scored is None or scored.n == 0:
            out.update(aer=None, precision=None, recall=None, heads=[], readings={},
                       note="no gold links in the file: links extracted, metrics skipped")
        else:
            out.update(scored[self.method].as_dict())
            m = self.method
            out["heads"] = [{"layer": li, "head": hi, "aer": self.tally[Method(m.extract, m.reading, li, hi,
                                                                                m.threshold, m.weights)].aer}
                            for li, hi in selectors(self.tally.layers, self.tally.heads) if hi is not None]
            out["readings"] = {}
            for reading in READINGS:
                if self.selection:  # `best`: the best method of each reading, chosen and reported as above
                    pick = self.selection["per_reading"][reading]
                else:
                    pick = Method(m.extract, reading, m.layer, m.head, m.threshold, m.weights)
                out["readings"][reading] = {"method": pick.name if isinstance(pick, Method) else pick,
                                            **scored[pick].as_dict()}
        if self.selection:
            out["selection"] = {k: v for k, v in self.selection.items() if k != "per_reading"}
        out["skipped"] = [{"index": i, "reason": r} for i, r in self.skipped]
        return out


def _golds(examples: Sequence[Example], what: str = "sentence") -> dict[int, Gold]:
    """Parsed gold links of the examples that have any; ValueError naming the sentence otherwise."""
    golds: dict[int, Gold] = {}
    for k, ex in enumerate(examples):
        if ex.gold.strip():
            try:
                golds[k] = parse_pharaoh(ex.gold)
                golds[k].check(len(ex.source.split()), len(ex.target.split()))
            except ValueError as exc:
                raise ValueError(f"{what} {k + 1}: {exc}") from None
    return golds


def _fits(wa: WordAttention, ex: Example) -> bool:
    """The engine's normalised words are as many as the file's, so gold indices point at the same words."""
    return len(wa.source_words) == len(ex.source.split()) and len(wa.target_words) == len(ex.target.split())


MISFIT = "normalising the sentence changed its number of words, so the gold indices would not match"


def run_alignment(engine: Engine, examples: Sequence[Example], method: str = DEFAULT_METHOD,
                  batch_size: int = 32, progress: bool = True,
                  select_on: Sequence[Example] | None = None) -> Report:
    """Align every example and count every candidate method against its gold links (when it has any).

    `best` picks the lowest-AER method: on `select_on` when given (other sentences with gold, e.g. a valid
    split), its scores then reported on all of `examples`; otherwise, with 20 or more gold sentences, on the
    first half, scores reported on the second half (a held-out estimate); with fewer, chosen and reported on
    the same sentences, and the report says so."""
    weights = weights_of(method)
    chosen = None if method.startswith(BEST) else Method.parse(method)
    thresholds = SEARCH_THRESHOLDS
    if chosen is not None:
        chosen.check(engine.n_decoder_layers, engine.n_heads)
        if chosen.threshold not in thresholds:
            thresholds = (*thresholds, chosen.threshold)

    def new() -> Tally:
        return Tally(engine.n_decoder_layers, engine.n_heads, thresholds, weights)

    golds = _golds(examples)
    pre = None
    if chosen is None and select_on is not None:
        pre_golds = _golds(select_on, "selection sentence")
        pre = new()
        for item in align_corpus(engine, select_on, batch_size, progress, weights=weights):
            if item.attention is not None and item.index in pre_golds and _fits(item.attention,
                                                                                select_on[item.index]):
                pre.add(item.attention, pre_golds[item.index])
        if pre.n == 0:
            raise ValueError("no sentence of the selection data has gold links this model could align")
    split = len(golds) // 2 if (chosen is None and pre is None and len(golds) >= 20) else None
    first_half = set(sorted(golds)[:split])
    tally = new()
    select, held = (new(), new()) if split is not None else (None, None)
    kept: dict[int, WordAttention] = {}
    skipped: list[tuple[int, str]] = []
    for item in align_corpus(engine, examples, batch_size, progress, weights=weights):
        if item.attention is None or not _fits(item.attention, examples[item.index]):
            skipped.append((item.index, item.error or MISFIT))
            continue
        kept[item.index] = wa = item.attention
        if item.index in golds:
            tally.add(wa, golds[item.index])
            if split is not None:
                (select if item.index in first_half else held).add(wa, golds[item.index])
    selection: dict[str, Any] = {}
    if chosen is None:
        pick_from = pre or select or tally
        if pick_from.n == 0:
            chosen = Method.parse(DEFAULT_METHOD)
            selection = {"note": f"no gold links: 'best' cannot choose, so {DEFAULT_METHOD} was used"}
        else:
            chosen = pick_from.best()
            if pre is not None:
                selection = {"chosen_on": pre.n, "reported_on": tally.n,
                             "note": "best method chosen on separate selection sentences, scores reported on "
                                     "these"}
            elif split is not None:
                selection = {"chosen_on": select.n, "reported_on": held.n,
                             "note": "best method chosen on the first half of the gold sentences, scores reported "
                                     "on the second half"}
            else:
                selection = {"chosen_on": tally.n, "reported_on": tally.n,
                             "note": "best method chosen and scored on the same sentences (fewer than 20 with "
                                     "gold): an optimistic, in-sample figure"}
            if tally.n:
                selection["in_sample_aer"] = tally[chosen].aer
            selection["per_reading"] = {r: pick_from.best(r) for r in READINGS}
    links = {k: chosen.links(wa) for k, wa in kept.items()}
    return Report(tally if tally.n else None, links, chosen, skipped, len(examples), tally.n, selection, held)
