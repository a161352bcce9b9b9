"""What a fine-tune's start model was trained on, so that `train --init-from M --data FILE` keeps M's training
sentences out of its valid and test splits: a test sentence M trained on measures recall, not translation.

M's card names its data (`data`, a file, and `seed`, the split's seed: its training split is rebuilt exactly as
`train --data` made it, model.corpora.grouped_split.held_out_split), and its own start (`init_from`), followed back
while the folders are there. A start trained on a built-in generated corpus, or whose data file is not here, cannot
be checked: that is said, not hidden."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from attention_lens.model.corpora.grouped_split import PROJECT, Pair, held_out_split, without_seen


def _folder(path: str) -> Path:
    """A path a card records: absolute, relative to where train ran (when it is there), or to the project."""
    return Path(path) if Path(path).is_absolute() or Path(path).exists() else PROJECT / path


def start_training_pairs(init_from: str) -> tuple[list[Pair], list[str], list[str]]:
    """(the training pairs of the start and of the starts before it, the data read as "FILE (seed S)", why a
    start's pairs could not be read)."""
    pairs: list[Pair] = []
    read: list[str] = []
    unchecked: list[str] = []
    folder, visited = Path(init_from), set()
    while folder.resolve() not in visited:
        visited.add(folder.resolve())
        try:
            card = json.loads((folder / "card.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            unchecked.append(f"{folder} has no readable card.json")
            break
        data, seed = card.get("data"), int(card.get("seed", 0))
        if data and f"{data} (seed {seed})" not in read:
            if _folder(data).is_file():
                pairs.extend(held_out_split(str(_folder(data).resolve()), seed)["train"])
                read.append(f"{data} (seed {seed})")
            else:
                unchecked.append(f"{folder}'s training data {data} is not here")
        elif not data:
            unchecked.append(f"{folder} was trained on the generated {card.get('pair', '?')} corpus, not a file")
        start = (card.get("init_from") or {}).get("path")
        if not start or not _folder(start).is_dir():
            break
        folder = _folder(start)
    return pairs, read, unchecked


def hold_out_start(splits: dict[str, list[Pair]], init_from: str) -> tuple[dict[str, list[Pair]], dict[str, Any]]:
    """The splits with the start's training sentences moved out of valid and test (into train), and what the card
    says of it (`held_out_of_start`: the data read, the pairs moved, what could not be checked)."""
    seen, read, unchecked = start_training_pairs(init_from)
    info: dict[str, Any] = {"start": init_from, "start_data": read}
    if seen:
        splits, moved = without_seen(splits, seen)
        info.update(valid_moved=moved["valid"], test_moved=moved["test"])
    if unchecked:
        info["unchecked"] = unchecked
    return splits, info


def describe(info: dict[str, Any], test_pairs: int) -> str:
    """One line for stderr: what was held out, or why it could not be."""
    out = []
    if info["start_data"]:
        out.append(f"{info['test_moved']} test and {info['valid_moved']} valid pairs shared a sentence with "
                   f"{info['start']}'s training split ({', '.join(info['start_data'])}) and were moved to training: "
                   f"the {test_pairs} test pairs left are sentences it never saw")
    if info.get("unchecked"):
        out.append("not checked for overlap with the start's training sentences: " + "; ".join(info["unchecked"]))
    return "train --init-from: " + ". ".join(out)
