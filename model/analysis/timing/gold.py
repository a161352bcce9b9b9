"""Gold word timings in the formats people have, checked as they are read.

- CTM (NIST sclite, Kaldi): `utterance channel start duration word [confidence]`, seconds; `;;` lines are
  comments. A clip's words are the lines of its utterance id.
- Praat TextGrid (Montreal Forced Aligner): the intervals of the word tier (a tier named `words` or `word`, or
  MFA's `speaker - words`), read with praatio; empty intervals are silence.
- The project's own: a third column of the clip list, one `start-end` pair (seconds) per word of the transcript.

Labels that are not speech (`<eps>`, `<sil>`, `[noise]`, `sil`, `sp`, `spn` and empty labels) are left out.
Every refusal is a TimingError of one line naming the file and the line (a TextGrid: its interval): times that
are not numbers or negative, intervals out of order or overlapping, words past the clip's end
(`check_duration`), a TextGrid without a word tier. Nothing is scored silently.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

from attention_lens.model.engine.errors import ModelInputError

TOLERANCE_S = 0.001 + 1e-9  # an end at the next start (MFA), or 1 ms past it (times rounded to 3 decimals)
NON_SPEECH = frozenset({"", "<eps>", "<sil>", "<unk>", "<noise>", "sil", "sp", "spn", "<s>", "</s>"})


class TimingError(ModelInputError):
    """Gold timings that cannot be scored: one line naming the file and line, and why."""


@dataclass(frozen=True)
class GoldWord:
    word: str
    start: float  # seconds from the clip's start
    end: float
    where: str  # "gold.ctm, line 12": for messages


@dataclass(frozen=True)
class ClipGold:
    """One clip's gold words, in time order (checked)."""

    words: tuple[GoldWord, ...]
    where: str  # the file, and the lines or tier they came from


def spoken(label: str) -> bool:
    """Whether a label is a word (not silence, noise or an aligner's marker)."""
    text = label.strip()
    return text.lower() not in NON_SPEECH and not (text[:1] in "[<" and text[-1:] in "]>")


def _seconds(text: str, what: str, where: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise TimingError(f"{where}: the {what} {text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value < 0:
        raise TimingError(f"{where}: the {what} {text!r} is not a time (a finite number of seconds >= 0)")
    return value


def checked(words: list[GoldWord], where: str) -> ClipGold:
    """The words as a ClipGold, after checking each interval and their order: TimingError for an end before its
    start, a start before the previous word's (unsorted) or before its end (overlapping)."""
    for k, w in enumerate(words):
        if w.end < w.start:
            raise TimingError(f"{w.where}: {w.word!r} ends ({w.end:g} s) before it starts ({w.start:g} s)")
        if k:
            prev = words[k - 1]
            if w.start < prev.start:
                raise TimingError(f"{w.where}: {w.word!r} at {w.start:g} s comes after {prev.word!r} at "
                                  f"{prev.start:g} s ({prev.where}): the intervals are not sorted by time")
            if w.start < prev.end - TOLERANCE_S:
                raise TimingError(f"{w.where}: {w.word!r} starts at {w.start:g} s, before {prev.word!r} ends at "
                                  f"{prev.end:g} s ({prev.where}): the intervals overlap")
    return ClipGold(tuple(words), where)


def check_duration(gold: ClipGold, duration_s: float, clip: str) -> None:
    """TimingError when a gold word ends after its clip does (1 ms of rounding allowed)."""
    for w in gold.words:
        if w.end > duration_s + 1e-3:
            raise TimingError(f"{w.where}: {w.word!r} ends at {w.end:g} s, past the end of {clip} "
                              f"({duration_s:.3f} s)")


def read_ctm(path: str) -> dict[str, ClipGold]:
    """A CTM file -> {utterance id: its words}, each utterance's lines checked in file order."""
    name = os.path.basename(path)
    by_utt: dict[str, list[GoldWord]] = {}
    try:
        with open(path, encoding="utf-8") as f:
            for number, raw in enumerate(f, start=1):
                line = raw.strip()
                if not line or line.startswith(";;"):
                    continue
                where = f"{name}, line {number}"
                fields = line.split()
                if len(fields) < 5:
                    raise TimingError(f"{where}: a CTM line is 'utterance channel start duration word', got "
                                      f"{line[:80]!r}")
                start = _seconds(fields[2], "start", where)
                duration = _seconds(fields[3], "duration", where)
                if spoken(fields[4]):
                    by_utt.setdefault(fields[0], []).append(GoldWord(fields[4], start, start + duration, where))
    except UnicodeDecodeError as exc:
        raise TimingError(f"{name}: not UTF-8 text ({exc.reason})") from None
    except OSError as exc:
        raise TimingError(f"{name}: cannot be read ({exc.strerror})") from None
    if not by_utt:  # else every clip of the list is said to have no utterance in it, one by one
        raise TimingError(f"{name}: no word timings (the file is empty, or holds only comments and silences)")
    return {utt: checked(words, f"{name} ({utt})") for utt, words in by_utt.items()}


def word_tier_name(names: list[str]) -> str | None:
    """The word tier among a TextGrid's tier names: `words` / `word` (any case), or MFA's `speaker - words`."""
    for n in names:
        if n.strip().lower() in ("words", "word") or n.strip().lower().endswith(" - words"):
            return n
    return None


def read_textgrid(path: str) -> ClipGold:
    """A TextGrid's word tier (praatio) -> the clip's words; TimingError without a word tier."""
    from praatio import textgrid

    name = os.path.basename(path)
    try:
        grid = textgrid.openTextgrid(path, includeEmptyIntervals=False, reportingMode="silence")
    except Exception as exc:  # praatio raises its own and built-in exceptions for a malformed file
        raise TimingError(f"{name}: not a TextGrid praatio can read ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''})") from None
    tier_name = word_tier_name(list(grid.tierNames))
    if tier_name is None:
        raise TimingError(f"{name}: no word tier (a tier named 'words'); its tiers: "
                          f"{', '.join(grid.tierNames) or 'none'}")
    tier = grid.getTier(tier_name)
    if not hasattr(tier, "entries") or tier.entries and len(tier.entries[0]) != 3:
        raise TimingError(f"{name}: tier {tier_name!r} is a point tier, not intervals of words")
    words = [GoldWord(label.strip(), float(start), float(end), f"{name}, interval {k} of tier {tier_name!r}")
             for k, (start, end, label) in enumerate(tier.entries, start=1) if spoken(label)]
    return checked(words, name)


def read_pairs(text: str, words: list[str], where: str) -> ClipGold:
    """The list's own timings column, `start-end` per word of the transcript, -> the clip's words."""
    pairs = text.split()
    if len(pairs) != len(words):
        raise TimingError(f"{where}: {len(pairs)} start-end pairs for the transcript's {len(words)} words")
    out = []
    for word, pair in zip(words, pairs, strict=True):
        start, sep, end = pair.partition("-")
        if not sep:
            raise TimingError(f"{where}: {pair!r} is not start-end (seconds, e.g. 0.52-0.81)")
        out.append(GoldWord(word, _seconds(start, "start", where), _seconds(end, "end", where), where))
    return checked([w for w in out if spoken(w.word)], where)
