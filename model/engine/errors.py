"""The errors of the seam: what any engine raises when a folder or an input cannot be used.

Both carry a message for the user, in plain words; callers (CLI, app) show it as it is.
"""

from __future__ import annotations

from pathlib import Path

WEIGHTS = "model.safetensors"
PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")


class CheckpointError(ValueError):
    """A folder that cannot be opened as a model: the message says why, in plain words."""


class ModelInputError(ValueError):
    """The input cannot be run on this model (empty, longer than its positions, ...): a message for the user."""


def refuse_pickles(folder: Path) -> None:
    """Raise CheckpointError when a model folder holds pickle weights and no safetensors ones (any family)."""
    pickles = sorted(p.name for p in folder.iterdir() if p.suffix in PICKLE_SUFFIXES)
    if pickles and not (folder / WEIGHTS).is_file():
        raise CheckpointError(
            f"{folder} holds only pickle weights ({', '.join(pickles)}). Pickle files can run arbitrary code "
            f"when loaded, so this tool never opens them. Convert the weights to {WEIGHTS} (safetensors).")
