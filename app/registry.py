"""Which model folders the app may open.

A visitor picks an entry by its key; the app never opens a path typed into the page. Entries come from
sources: the shipped checkpoints under `checkpoints/`, and folders the operator names in the environment
(`LENS_MODEL_DIRS`, os.pathsep-separated). A later source ("your model": Hugging Face folders) is one more
function returning `ModelEntry`s, added to `SOURCES`.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
SHIPPED = ("en-fr", "en-fr-no-causal-mask", "en-fr-no-shift", "de-en")
ENV_DIRS = "LENS_MODEL_DIRS"
ENV_DEFAULT = "LENS_DEFAULT_MODEL"


@dataclass(frozen=True)
class ModelEntry:
    key: str  # what the page's picker stores; unique
    path: Path  # the folder load_engine opens
    origin: str  # "shipped" | "operator" (later: "huggingface")
    label: str = ""

    @property
    def title(self) -> str:
        return self.label or self.key


def shipped_entries(root: Path = CHECKPOINTS) -> list[ModelEntry]:
    """Shipped checkpoints that are there (a folder still being trained into has no config.json yet)."""
    return [ModelEntry(name, root / name, "shipped") for name in SHIPPED if (root / name / "config.json").is_file()]


def operator_entries(env: dict[str, str] | None = None) -> list[ModelEntry]:
    env = os.environ if env is None else env
    out = []
    for raw in env.get(ENV_DIRS, "").split(os.pathsep):
        if raw.strip():
            path = Path(raw.strip()).expanduser().resolve()
            out.append(ModelEntry(path.name, path, "operator", f"{path.name} (operator)"))
    return out


SOURCES: list[Callable[[], list[ModelEntry]]] = [shipped_entries, operator_entries]


def entries() -> list[ModelEntry]:
    """Every openable model, shipped first; a later key that repeats an earlier one gets a numeric suffix."""
    out: list[ModelEntry] = []
    seen: set[str] = set()
    for source in SOURCES:
        for entry in source():
            key, i = entry.key, 2
            while key in seen:
                key, i = f"{entry.key}-{i}", i + 1
            seen.add(key)
            out.append(entry if key == entry.key else ModelEntry(key, entry.path, entry.origin, entry.label))
    return out


def default_key(available: list[ModelEntry] | None = None) -> str | None:
    """`LENS_DEFAULT_MODEL` (a key or a folder path of an entry), else the shipped en-fr, else the first."""
    available = entries() if available is None else available
    if not available:
        return None
    wanted = os.environ.get(ENV_DEFAULT, "").strip()
    if wanted:
        for e in available:
            if wanted == e.key or Path(wanted).expanduser().resolve() == e.path:
                return e.key
    keys = [e.key for e in available]
    return "en-fr" if "en-fr" in keys else keys[0]


def resolve(key: str, available: list[ModelEntry] | None = None) -> ModelEntry:
    """The entry with this key; KeyError for anything else (so a crafted value opens nothing)."""
    for e in entries() if available is None else available:
        if e.key == key:
            return e
    raise KeyError(key)
