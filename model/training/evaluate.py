"""Evaluation: free-running exact match, chrF and BLEU (sacrebleu), teacher-forced accuracy and loss."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import sacrebleu
from tqdm import tqdm

from model.engine import Engine


def _log_softmax(logits: np.ndarray) -> np.ndarray:
    z = logits - logits.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def teacher_forced_scores(engine: Engine, sources: Sequence[str], targets: Sequence[str], causal: bool,
                          shift: bool, batch_size: int = 64, progress: bool = False) -> tuple[float, float]:
    """(token accuracy, mean cross-entropy per token) of teacher forcing in the given setting."""
    correct = total = 0
    loss = 0.0
    batches = range(0, len(sources), batch_size)
    for i in tqdm(batches, desc="teacher forcing", disable=not progress, leave=False):
        chunk = sources[i:i + batch_size]
        srcs = [engine.fit_source(engine.encode_source(engine.normalise(s))[0]) for s in chunk]
        labels = [engine.encode_target(engine.normalise_target(t)) for t in targets[i:i + batch_size]]
        for lab, logits in zip(labels, engine.teacher_forced_logits(srcs, labels, causal, shift)):
            lp = _log_softmax(logits.astype(np.float64))
            lab = np.asarray(lab)
            correct += int((lp.argmax(-1) == lab).sum())
            loss -= float(lp[np.arange(len(lab)), lab].sum())
            total += len(lab)
    return correct / max(total, 1), loss / max(total, 1)


def translate_all(engine: Engine, sources: Sequence[str], batch_size: int = 64, progress: bool = False) -> list[str]:
    out: list[str] = []
    for i in tqdm(range(0, len(sources), batch_size), desc="decoding", disable=not progress, leave=False):
        out.extend(engine.translate_batch([engine.normalise(s) for s in sources[i:i + batch_size]]))
    return out


def evaluate(engine: Engine, sources: Sequence[str], targets: Sequence[str], causal: bool = True,
             shift: bool = True, progress: bool = False) -> dict[str, Any]:
    """The DESIGN.md `eval --json` keys."""
    hyps = translate_all(engine, sources, progress=progress)
    refs = [" ".join(t.split()) for t in targets]
    hyps = [" ".join(h.split()) for h in hyps]
    acc, loss = teacher_forced_scores(engine, sources, targets, causal, shift, progress=progress)
    return {
        "n": len(sources),
        "exact_match": sum(h == r for h, r in zip(hyps, refs)) / max(len(refs), 1),
        "chrf": sacrebleu.corpus_chrf(hyps, [refs]).score,
        # force: the corpus text is tokenised by design (punctuation as its own token).
        "bleu": sacrebleu.corpus_bleu(hyps, [refs], force=True).score,
        "teacher_forced_accuracy": acc,
        "teacher_forced_loss": loss,
    }
