"""The clips a timing run reads: a clip list with its gold timings, streamed, and each clip's cross-attention.

The list is `eval --audio-data`'s: `clip path<TAB>transcript`, a path absolute or relative to the list's folder,
blank lines skipped; an optional third column holds the clip's own timings (`start-end` per word). Gold timings
come from that column or from `--timings`: a CTM file (utterance id = the clip's path as written, its file name or
its stem), a folder of TextGrids (`<stem>.TextGrid`, as the Montreal Forced Aligner writes them), or one TextGrid
for the clip of the same stem. Before any clip runs, the whole list is read once: every clip must have timings,
every CTM utterance must be a clip of the list, every transcript must match its timings' words, and the words'
frequencies over the list are counted (the breakdown's bands). A clip's timings past its end are refused when
the clip is read.

`clip_attention`: a batch of clips through a speech engine's teacher-forced pass (the contract's
`audio_source` and `cross_attention_batch`): for each transcript token one decoder row (`TOKEN_ROWS`: the row that
reads it, as transformers times tokens, or the row that predicts it, one earlier, as openai/whisper's
`find_alignment` does), over the clip's own encoder frames (the log-mel frames the clip covers, halved, as
transformers' `num_frames // 2`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from attention_lens.model.analysis.timing.gold import (
    ClipGold,
    TimingError,
    check_duration,
    read_ctm,
    read_pairs,
    read_textgrid,
)
from attention_lens.model.analysis.timing.rank import ClipAttention
from attention_lens.model.analysis.timing.words import check_transcript, match, transcript_keys, word_key
from attention_lens.model.engine.stream import Shard


@dataclass(frozen=True)
class ClipLine:
    """One line of the clip list: its 1-based number, the clip as written, its resolved path, the transcript,
    and its gold timings."""

    number: int
    name: str
    path: str
    transcript: str
    gold: ClipGold


class Timings:
    """Where the gold timings of a list's clips come from (module docstring)."""

    def __init__(self, timings: str | None) -> None:
        self.source = timings
        self.ctm: dict[str, ClipGold] | None = None
        self.folder: str | None = None
        self.used: set[str] = set()  # the CTM utterances some clip matched
        if timings is None:
            return
        if os.path.isdir(timings):
            self.folder = timings
        elif timings.lower().endswith(".textgrid"):
            if not os.path.isfile(timings):
                raise TimingError(f"{timings}: no such file")
        else:
            if not os.path.isfile(timings):
                raise TimingError(f"{timings}: no such file")
            self.ctm = read_ctm(timings)

    def keys(self, name: str) -> list[str]:
        base = os.path.basename(name)
        return [name, base, os.path.splitext(base)[0]]

    def of(self, name: str, column: str | None, words: list[str], where: str) -> ClipGold:
        """The gold of the clip `name` (TimingError naming `where` when there is none)."""
        if self.source is None:
            if column is None:
                raise TimingError(f"{where}: no timings: give --timings (CTM, TextGrid) or a third column of "
                                  f"start-end pairs")
            return read_pairs(column, words, where)
        if self.ctm is not None:
            for key in self.keys(name):
                if key in self.ctm:
                    self.used.add(key)
                    return self.ctm[key]
            raise TimingError(f"{where}: clip {name!r} has no utterance in {os.path.basename(self.source)} (looked "
                              f"for {', '.join(repr(k) for k in dict.fromkeys(self.keys(name)))})")
        stem = self.keys(name)[2]
        if self.folder is not None:
            for ext in (".TextGrid", ".textgrid", ".textGrid"):
                path = os.path.join(self.folder, stem + ext)
                if os.path.isfile(path):
                    return read_textgrid(path)
            raise TimingError(f"{where}: no {stem}.TextGrid in {self.source} for clip {name!r}")
        if os.path.splitext(os.path.basename(self.source))[0] != stem:
            raise TimingError(f"{where}: clip {name!r} is not {os.path.basename(self.source)}'s clip (a TextGrid "
                              f"times the clip of its own name; give a folder of TextGrids for a list)")
        return read_textgrid(self.source)

    def check_all_used(self) -> None:
        """TimingError naming the first CTM utterance that matched no clip of the list."""
        if self.ctm is None:
            return
        unused = [g for utt, g in self.ctm.items() if utt not in self.used]
        if unused:
            first = unused[0]
            raise TimingError(f"{first.words[0].where}: utterance {first.where.split('(', 1)[1].rstrip(')')!r} "
                              f"matches no clip of the list ({len(unused)} such utterances)")


def read_clip_list(path: str, timings: Timings, shard: Shard = Shard()) -> Iterator[ClipLine]:
    """The lines of the clip list that `shard` holds, each with its gold (checked against its transcript)."""
    name = os.path.basename(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isfile(path):
        raise TimingError(f"{path}: no such file")
    with open(path, encoding="utf-8") as f:
        for number, raw in enumerate(f, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip() or not shard.holds(number):
                continue
            where = f"{name}, line {number}"
            cols = line.split("\t")
            if len(cols) < 2 or not cols[0].strip() or not cols[1].strip():
                raise TimingError(f"{where}: a clip line is 'clip path<TAB>transcript[<TAB>timings]', got "
                                  f"{line[:80]!r}")
            clip, transcript = cols[0].strip(), cols[1].strip()
            words = [w for w in transcript.split() if word_key(w)]
            gold = timings.of(clip, cols[2] if len(cols) > 2 and cols[2].strip() else None, words, where)
            check_transcript(transcript, gold, where)
            yield ClipLine(number, clip, clip if os.path.isabs(clip) else os.path.join(folder, clip), transcript,
                           gold)


def survey(path: str, timings: Timings, also: str | None = None) -> tuple[int, Counter]:
    """Read the whole list once, and the selection list `also` when given (every check of the module docstring):
    (the list's clips, its word frequencies)."""
    counts: Counter = Counter()
    n = 0
    for line in read_clip_list(path, timings):
        counts.update(transcript_keys(line.transcript))
        n += 1
    if not n:
        raise TimingError(f"{os.path.basename(path)}: no clip lines")
    if also is not None and not count_clips(also, timings):
        raise TimingError(f"{os.path.basename(also)}: no clip lines")
    timings.check_all_used()
    return n, counts


def count_clips(path: str, timings: Timings) -> int:
    """The clips of a list, every line checked."""
    return sum(1 for _ in read_clip_list(path, timings))


TOKEN_ROWS = ("reading", "predicting")  # which decoder row times a token: the one that reads it, or predicts it


def token_row_start(n_prefix: int, token_rows: str) -> int:
    """The decoder row of the transcript's first token: after the start token and the prompt's `n_prefix` tokens
    the row that reads it, or the one before, whose output predicts it."""
    if token_rows not in TOKEN_ROWS:
        raise ValueError(f"token rows are {' or '.join(TOKEN_ROWS)}, not {token_rows!r}")
    return 1 + n_prefix if token_rows == "reading" else n_prefix


def clip_attention(engine: Any, lines: Sequence[ClipLine], options: Any, frequencies: Counter | None = None,
                   token_rows: str = "reading") -> list[ClipAttention]:
    """A batch of clips through the engine's teacher-forced pass (module docstring)."""
    token_row_start(0, token_rows)  # a wrong name is refused before any clip runs
    options = replace(options, mode="teacher_forced")
    srcs, labels, axes = [], [], []
    for line in lines:
        src, _axis, record, _warnings = engine.audio_source(line.path, options)
        check_duration(line.gold, float(record["duration_s"]), line.name)
        run_options = replace(options, language=record.get("language"), task=record.get("task"))
        prefix = list(engine.forced_prefix(run_options))
        srcs.append(src)
        labels.append([*prefix, *engine.encode_target(line.transcript)])
        axes.append((len(prefix), int(record["mel"].shape[1]) // 2, float(record["duration_s"]),
                     float(record["frame_s"])))
    out = []
    crosses = engine.cross_attention_batch(srcs, labels, replace(options, language=None, task=None)) if srcs else []
    for line, label, (n_prefix, frames, duration, frame_s), cross in zip(lines, labels, axes, crosses, strict=True):
        tokens = [engine.piece(i) for i in label[n_prefix:]]  # the transcript's tokens, <|endoftext|> last
        words = match(tokens, line.gold, f"{line.name} (line {line.number})")
        start, count = token_row_start(n_prefix, token_rows), cross.shape[2] - 1 - n_prefix
        rows = cross[:, :, start:start + count, :frames]  # one row a transcript token; the clip's frames
        out.append(ClipAttention(line.number, line.name, rows.astype("float32", copy=False), tuple(words),
                                 line.gold, duration,
                                 tuple(frequencies[w.key] for w in words) if frequencies is not None else (),
                                 frame_s))
    return out
