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


def read_clip_list(path) -> list[tuple[str, str]]:
    """`clip path<TAB>transcript` lines → (absolute path, transcript); relative paths are relative to the list."""
    from pathlib import Path

    path = Path(path)
    rows = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        cols = line.split("\t")
        if len(cols) != 2 or not cols[0].strip():
            raise ValueError(f"{path}:{n}: expected clip path<TAB>transcript")
        clip = Path(cols[0])
        rows.append((str(clip if clip.is_absolute() else path.parent / clip), cols[1]))
    return rows


def score_clip_list(model_dir, list_path, batch: int = 50) -> dict:
    """WER of the Whisper folder `model_dir` on a clip list (each clip read by `read_audio`, 16 kHz): {"wer", "n",
    "words", "hypotheses"}. Greedy, forced prefix `<|en|><|transcribe|><|notimestamps|>`."""
    from attention_lens.model.audio.reader import read_audio
    from transformers import AutoProcessor, GenerationConfig, WhisperForConditionalGeneration

    processor = AutoProcessor.from_pretrained(model_dir)
    model = WhisperForConditionalGeneration.from_pretrained(model_dir)
    gen = GenerationConfig.from_pretrained(model_dir)
    rows = read_clip_list(list_path)
    window = processor.feature_extractor.chunk_length
    samples = [read_audio(p, max_seconds=window).samples for p, _ in rows]
    feats = processor.feature_extractor(samples, sampling_rate=16_000, return_tensors="np").input_features
    hyps = transcribe_features(model, processor, gen, feats, batch=batch)
    refs = [t for _, t in rows]
    return {"wer": word_error_rate(refs, hyps), "n": len(rows), "words": sum(len(normalise(r).split()) for r in refs),
            "hypotheses": hyps}
