"""Word timings read off one Trace of a speech model: a pure function of its cross-attention and a head set.

The rows used are those that read the run's own tokens after Whisper's prompt (the leading special tokens of
the target: language, task, <|notimestamps|>), over the clip's frames (the log-mel frames it covers, halved, as
transformers' `num_frames // 2`; the padding band and anything after the clip left out). The times are
transformers' `token_timestamps` (model.analysis.timing.dtw) and each word's start is its first token's time,
its end the next word's first token's (the last word's: the end token's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from attention_lens.model.analysis.timing.clips import token_row_start
from attention_lens.model.analysis.timing.dtw import FILTER_WIDTH, token_times
from attention_lens.model.analysis.timing.words import is_special, token_words

if TYPE_CHECKING:
    from attention_lens.model.engine.trace import Trace


@dataclass(frozen=True)
class WordTiming:
    word: str
    start: float  # seconds
    end: float
    first: int  # its first and last token among the run's tokens after the prompt
    last: int


def prompt_length(trace: Trace) -> int:
    """The target tokens of Whisper's prompt: the leading special tokens (language, task, no-timestamps)."""
    n = 0
    while n < len(trace.target_tokens) and is_special(trace.target_tokens[n]):
        n += 1
    return n


def clip_frames(trace: Trace) -> int:
    """The encoder frames of the clip (transformers' num_frames // 2 of the log-mel frames it covers)."""
    if trace.source is None or trace.source.get("kind") != "audio":
        raise ValueError("word timings need a Trace of a speech model (its source is a clip)")
    return int(trace.source["mel"].shape[1]) // 2


def trace_rows(trace: Trace, token_rows: str = "reading") -> tuple[np.ndarray, tuple[str, ...]]:
    """((L, H, R, F) the cross-attention rows of the run's tokens after the prompt, over the clip's frames; those
    R + 1 tokens). `token_rows`: the rows that read them (transformers' rule) or the rows that predict them, one
    earlier (openai/whisper's)."""
    n = prompt_length(trace)
    frames = min(clip_frames(trace), trace.cross_attention.shape[-1])
    start, count = token_row_start(n, token_rows), trace.cross_attention.shape[2] - 1 - n
    return trace.cross_attention[:, :, start:start + count, :frames], tuple(trace.target_tokens[n:])


def trace_token_times(trace: Trace, heads: Sequence[tuple[int, int]], width: int = FILTER_WIDTH,
                      token_rows: str = "reading") -> tuple[tuple[str, ...], np.ndarray]:
    """(the run's tokens after the prompt, their DTW times in seconds) for a head set ((layer, head), 0-based)."""
    rows, tokens = trace_rows(trace, token_rows)
    times = token_times(rows, heads, width, float(trace.source["frame_s"]))
    return tokens, times[:len(tokens)]


def word_timings(trace: Trace, heads: Sequence[tuple[int, int]], width: int = FILTER_WIDTH,
                 token_rows: str = "reading") -> list[WordTiming]:
    """Each word of the run's text with its DTW start and end (module docstring)."""
    tokens, times = trace_token_times(trace, heads, width, token_rows)
    words = token_words(tokens)
    out = []
    for k, w in enumerate(words):
        end_token = words[k + 1].first if k + 1 < len(words) else min(w.last + 1, len(times) - 1)
        out.append(WordTiming(w.text, float(times[w.first]), float(times[end_token]), w.first, w.last))
    return out
