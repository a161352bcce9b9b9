"""Transcribing precomputed log-mels with a Whisper model, and the word error rate as `eval` reports it."""

from __future__ import annotations

import re

import jiwer
import numpy as np
import torch

_PUNCT = re.compile(r"[^\w\s']|(?<!\w)'|'(?!\w)")


def normalise(text: str) -> str:
    """Lowercase, punctuation removed (an apostrophe inside a word kept), spaces collapsed."""
    return " ".join(_PUNCT.sub(" ", text.lower()).split())


def word_error_rate(references: list[str], hypotheses: list[str]) -> float:
    """Word edits / reference words over all pairs, after `normalise` (jiwer)."""
    if len(references) != len(hypotheses) or not references:
        raise ValueError(f"{len(references)} references and {len(hypotheses)} hypotheses")
    refs = [normalise(r) for r in references]
    hyps = [normalise(h) for h in hypotheses]
    return float(jiwer.wer(refs, hyps))


@torch.no_grad()
def transcribe_features(model, processor, generation_config, features: np.ndarray, batch: int = 50,
                        language: str = "en", task: str = "transcribe") -> list[str]:
    """Greedy transcripts of log-mel `features` (clips × mels × frames) with the forced prefix of `language`
    and `task`."""
    model.eval()
    texts: list[str] = []
    for i in range(0, len(features), batch):
        x = torch.from_numpy(np.asarray(features[i:i + batch], dtype=np.float32))
        out = model.generate(x, generation_config=generation_config, language=language, task=task)
        texts += [t.strip() for t in processor.tokenizer.batch_decode(out, skip_special_tokens=True)]
    return texts
