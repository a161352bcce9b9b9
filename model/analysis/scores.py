"""How well a model translates a set of sentence pairs, the same way for every caller (`eval`, training's curve
and its card, the Leakage lab's sample, the Heads page's loss):

- free running: greedy translations (`translate_all`), compared with the references by `exact_match` (both sides
  with their white space folded) and by chrF and BLEU (sacrebleu): `text_scores`;
- teacher forcing: token accuracy and cross-entropy per token of the references (`teacher_forced_totals`).

`evaluate` gives all of them, the keys of `eval --json` (docs/formats.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import sacrebleu
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.runs import DecodeOptions
from attention_lens.model.engine.tensors import log_softmax
from tqdm import tqdm

BATCH = 64  # sentences per batched pass


def folded(text: str) -> str:
    """Text with its white space folded to single spaces (how a hypothesis and its reference are compared)."""
    return " ".join(text.split())


def exact_match(hyps: Sequence[str], refs: Sequence[str]) -> float:
    """The share of hypotheses equal to their reference, white space folded (0.0 for no pairs)."""
    return sum(folded(h) == folded(r) for h, r in zip(hyps, refs)) / max(len(refs), 1)


def text_scores(hyps: Sequence[str], refs: Sequence[str]) -> dict[str, float]:
    """exact_match, chrF and BLEU (sacrebleu, corpus level) of hypotheses against their references."""
    hyps, refs = [folded(h) for h in hyps], [folded(r) for r in refs]
    return {"exact_match": exact_match(hyps, refs), "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
            # force: the corpus text is tokenised by its conventions (punctuation as its own token).
            "bleu": sacrebleu.corpus_bleu(hyps, [refs], force=True).score}


def source_ids(engine: Engine, text: str) -> list[int]:
    """A natural source as the ids the encoder reads: normalised, tokenised, cut to the model's positions."""
    return engine.fit_source(engine.encode_source(engine.normalise(text))[0])


def translate_all(engine: Engine, sources: Sequence[str], batch_size: int = BATCH, max_len: int | None = None,
                  progress: bool = False) -> list[str]:
    """Greedy translations of natural sources (normalised, cut to the model's positions), decoded in batches
    without attention."""
    out: list[str] = []
    options = DecodeOptions(max_len=max_len)
    for i in tqdm(range(0, len(sources), batch_size), desc="decoding", disable=not progress, leave=False):
        srcs = [source_ids(engine, s) for s in sources[i:i + batch_size]]
        out.extend(engine.detokenize(r.out_ids) for r in engine.decode_batch(srcs, options, need_weights=False))
    return out


@dataclass(frozen=True)
class Totals:
    """Teacher forcing summed over pairs: tokens predicted right, their negative log-likelihood, and tokens."""

    correct: int
    nll: float  # nats
    tokens: int

    @property
    def accuracy(self) -> float:
        return self.correct / max(self.tokens, 1)

    @property
    def loss(self) -> float:
        """Mean cross-entropy per target token (nats)."""
        return self.nll / max(self.tokens, 1)


def teacher_forced_totals(engine: Engine, srcs: Sequence[list[int]], labels: Sequence[list[int]],
                          options: DecodeOptions, batch_size: int = BATCH, progress: bool = False) -> Totals:
    """Teacher forcing of (source ids, label ids) pairs in the setting of `options` (causal, shift, heads off),
    in batches without attention: each label's log-probability and whether it was the top prediction."""
    correct = tokens = 0
    nll = 0.0
    batches = range(0, len(srcs), batch_size)
    for i in tqdm(batches, desc="teacher forcing", disable=not progress, leave=False):
        runs = engine.teacher_forced_batch(list(srcs[i:i + batch_size]), list(labels[i:i + batch_size]), options,
                                           need_weights=False)
        for run in runs:
            lp = log_softmax(run.logits.astype(np.float64))
            lab = np.asarray(run.out_ids)
            correct += int((lp.argmax(-1) == lab).sum())
            nll -= float(lp[np.arange(len(lab)), lab].sum())
            tokens += len(lab)
    return Totals(correct, nll, tokens)


def evaluate(engine: Engine, sources: Sequence[str], targets: Sequence[str], causal: bool = True,
             shift: bool = True, progress: bool = False) -> dict[str, Any]:
    """The keys of `eval --json`: n, exact_match, chrf, bleu (greedy decoding), teacher_forced_accuracy and
    teacher_forced_loss (teacher forcing in the given setting)."""
    hyps = translate_all(engine, sources, progress=progress)
    srcs = [source_ids(engine, s) for s in sources]
    labels = [engine.encode_target(engine.normalise_target(t)) for t in targets]
    totals = teacher_forced_totals(engine, srcs, labels, DecodeOptions(mode="teacher_forced", causal=causal,
                                                                        shift=shift), progress=progress)
    return {"n": len(sources), **text_scores(hyps, targets), "teacher_forced_accuracy": totals.accuracy,
            "teacher_forced_loss": totals.loss}


def rounded(metrics: dict[str, Any]) -> dict[str, Any]:
    """Scores as a card keeps them: every float to 5 decimals."""
    return {k: round(v, 5) if isinstance(v, float) else v for k, v in metrics.items()}


class EvalSums:
    """The figures of `evaluate` kept as sums, so that a file can be scored batch by batch (model.engine.stream)
    and the shards of a file run apart add up exactly (`merged`): exact matches, chrF's and BLEU's corpus
    statistics (sacrebleu's own per-sentence counts; its corpus score is computed from their sum, so the sum of
    batches gives the corpus score), teacher-forced correct tokens, NLL and tokens."""

    def __init__(self) -> None:
        self.chrf, self.bleu = sacrebleu.metrics.CHRF(), sacrebleu.metrics.BLEU(force=True)
        self.n = self.exact = self.correct = self.tokens = 0
        self.nll = 0.0
        self.chrf_stats: list[int] = []
        self.bleu_stats: list[int] = []

    @staticmethod
    def _sum(total: list[int], stats: list[list[int]]) -> list[int]:
        for row in stats:
            total = [a + b for a, b in zip(total, row)] if total else list(row)
        return total

    def add_texts(self, hyps: Sequence[str], refs: Sequence[str]) -> None:
        hyps, refs = [folded(h) for h in hyps], [folded(r) for r in refs]
        self.n += len(refs)
        self.exact += sum(h == r for h, r in zip(hyps, refs))
        self.chrf_stats = self._sum(self.chrf_stats, self.chrf._extract_corpus_statistics(hyps, [refs]))
        self.bleu_stats = self._sum(self.bleu_stats, self.bleu._extract_corpus_statistics(hyps, [refs]))

    def add_totals(self, totals: Totals) -> None:
        self.correct += totals.correct
        self.nll += totals.nll
        self.tokens += totals.tokens

    def add(self, engine: Engine, sources: Sequence[str], targets: Sequence[str], options: DecodeOptions) -> None:
        """One batch: greedy translations scored against the targets, and teacher forcing in `options`."""
        hyps = translate_all(engine, sources, batch_size=max(len(sources), 1))
        self.add_texts(hyps, targets)
        srcs = [source_ids(engine, s) for s in sources]
        labels = [engine.encode_target(engine.normalise_target(t)) for t in targets]
        self.add_totals(teacher_forced_totals(engine, srcs, labels, options, batch_size=max(len(srcs), 1)))

    def result(self) -> dict[str, Any]:
        """The keys of `eval --json`, and `counts`: the sums a merge adds."""
        empty = not self.n
        return {"n": self.n, "exact_match": self.exact / max(self.n, 1),
                "chrf": 0.0 if empty else self.chrf._compute_score_from_stats(self.chrf_stats).score,
                "bleu": 0.0 if empty else self.bleu._compute_score_from_stats(self.bleu_stats).score,
                "teacher_forced_accuracy": self.correct / max(self.tokens, 1),
                "teacher_forced_loss": self.nll / max(self.tokens, 1),
                "counts": {"exact": self.exact, "chrf_stats": self.chrf_stats, "bleu_stats": self.bleu_stats,
                           "correct": self.correct, "nll": self.nll, "tokens": self.tokens}}

    @classmethod
    def merged(cls, results: Sequence[dict[str, Any]]) -> EvalSums:
        """The sums of several `result()`s (shards of one file)."""
        total = cls()
        for r in results:
            c = r.get("counts")
            if c is None:
                raise ValueError("merge: an eval result without its counts (written by an older eval)")
            total.n += r["n"]
            total.exact += c["exact"]
            total.chrf_stats = cls._sum(total.chrf_stats, [c["chrf_stats"]] if c["chrf_stats"] else [])
            total.bleu_stats = cls._sum(total.bleu_stats, [c["bleu_stats"]] if c["bleu_stats"] else [])
            total.correct += c["correct"]
            total.nll += c["nll"]
            total.tokens += c["tokens"]
        return total
