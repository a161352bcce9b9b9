"""Clips with gold word timings as the Alignment page hands them to a speech model's ranking: the shipped test
clips or an upload (a clip list, a CTM or TextGrid or none, the clips), as name -> bytes; what is wrong with an
upload, said in one line before any clip runs; and the files written to a folder the way
model.analysis.timing.run.rank_clips reads them.

In the folder every clip lies under its own file name and the list's clip paths are cut to file names (a browser
uploads files, never folders); the list keeps its own name, so that a line the ranking refuses is named as the
user knows it; the gold timings lie in a subfolder, so a `.txt` gold file cannot take the place of a `.txt` list
of the same name.
"""

from __future__ import annotations

import os

GOLD_FOLDER = "gold"


def safe_name(name: str) -> str:
    """An uploaded file's name as a plain file name (no folders, nothing hidden)."""
    base = os.path.basename(name.replace("\\", "/")).lstrip(".")
    return base or "upload"


def read_files(paths: list[str]) -> dict[str, bytes]:
    """Files of this server (the shipped test clips) as name -> bytes."""
    out = {}
    for p in paths:
        with open(p, "rb") as f:
            out[safe_name(p)] = f.read()
    return out


def clip_lines(listing: bytes) -> list[tuple[int, list[str]]]:
    """The list's lines that name a clip, as (1-based line number, tab-separated columns); UnicodeDecodeError
    when the list is not UTF-8."""
    lines = listing.decode("utf-8").splitlines()
    return [(number, line.split("\t")) for number, line in enumerate(lines, start=1)
            if line.strip() and line.split("\t")[0].strip()]


def problem(files: dict[str, bytes], list_name: str, timings_name: str | None) -> str | None:
    """What makes an upload unusable before any clip runs, in one line (None: nothing found here; the ranking
    checks the rest, each clip's audio and each line's gold words): an empty file, a list that is not UTF-8 text
    or names no clip, a clip the list names that was not uploaded, a clip with no timings at all."""
    for name, data in files.items():
        if not data:
            return f"{name}: an empty file (0 bytes)"
    try:
        lines = clip_lines(files[list_name])
    except UnicodeDecodeError as exc:
        return f"{list_name}: not UTF-8 text ({exc.reason} at byte {exc.start}); a clip list is text"
    if not lines:
        return f"{list_name}: no clip lines (each line: clip file<TAB>transcript[<TAB>start-end per word])"
    clips = {safe_name(n) for n in files} - {safe_name(list_name), safe_name(timings_name or "")}
    missing = [(number, cols[0].strip()) for number, cols in lines if safe_name(cols[0].strip()) not in clips]
    if missing:
        number, clip = missing[0]
        more = f"; {len(missing) - 1} more line(s) name clips not uploaded" if len(missing) > 1 else ""
        return (f"{list_name}, line {number}: the clip {safe_name(clip)!r} is not among the {len(clips)} clip(s) "
                f"uploaded: upload it too, or take its line out of the list{more}")
    if timings_name is None:
        bare = next((number for number, cols in lines if len(cols) < 3 or not cols[2].strip()), None)
        if bare is not None:
            return (f"{list_name}, line {bare}: no timings for this clip: upload gold timings (a CTM or TextGrid), "
                    f"or give each line a third column of start-end pairs")
    return None


def write(folder: str, files: dict[str, bytes], list_name: str, timings_name: str | None) -> tuple[str, str | None]:
    """The files written into `folder` (module docstring): (the list's path, the gold timings' path or None)."""
    gold = os.path.join(folder, GOLD_FOLDER)
    os.makedirs(gold, exist_ok=True)
    for name, data in files.items():
        if name not in (list_name, timings_name):
            with open(os.path.join(folder, safe_name(name)), "wb") as f:
                f.write(data)
    timings = None
    if timings_name is not None:
        timings = os.path.join(gold, safe_name(timings_name))
        with open(timings, "wb") as f:
            f.write(files[timings_name])
    lines = []
    for raw in files[list_name].decode("utf-8", errors="replace").splitlines():
        cols = raw.split("\t")
        if raw.strip() and cols[0].strip():
            cols[0] = safe_name(cols[0].strip())
        lines.append("\t".join(cols))
    listed = os.path.join(folder, safe_name(list_name))
    with open(listed, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return listed, timings
