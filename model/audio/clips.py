"""A list of clips: `clip path<TAB>transcript` per line (the transcript optional where a command allows it), a path
absolute or relative to the list's folder, blank lines skipped. `trace --data` and `eval --audio-data` read it.

A line that cannot be used (no path, a transcript missing where one is needed) is kept as a `ClipLine` with its
error, so a command reports it by number and goes on with the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class ClipLine:
    """One line of a clip list: its 1-based number, the path as written and resolved, the transcript ("" when the
    line has none) and, for a line that cannot be used, why (error)."""

    number: int
    written: str
    path: Path
    transcript: str
    error: str = ""


def read_clip_list(path: str | Path, need_transcript: bool = False) -> list[ClipLine]:
    """The lines of a clip list; raises ValueError for a list that cannot be read or holds no clip."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: the clip list cannot be read ({type(exc).__name__}: {exc})") from exc
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        written, _, rest = line.partition("\t")
        transcript = rest.split("\t", 1)[0].strip()
        written = written.strip()
        clip = Path(written)
        resolved = clip if clip.is_absolute() else path.parent / clip
        error = ""
        if not written:
            error = "no clip path before the tab"
        elif need_transcript and not transcript:
            error = "no transcript (expected clip path<TAB>transcript)"
        out.append(ClipLine(number, written, resolved, transcript, error))
    if not out:
        raise ValueError(f"{path}: no clips (expected clip path<TAB>transcript per line)")
    return out
