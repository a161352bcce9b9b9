"""Which model folders the app may open: the server's configuration decides, never a visitor.

A visitor picks an entry by its key; by default the app never opens a path typed into the page. Entries come
from sources: the shipped checkpoints under `checkpoints/`, folders of this project's checkpoints the operator
names (`LENS_MODEL_DIRS`), and "your model": Hugging Face seq2seq folders or hub ids the operator names
(`LENS_HF_MODELS`). Both lists are os.pathsep-separated. Hub ids are downloaded only when the operator sets
`LENS_ALLOW_HUB=1`. Only with `LENS_ALLOW_ANY_FOLDER=1` (a single-user machine) does the page offer a box for
any local folder; such a folder is named by a `folder:` key that `resolve` refuses unless that switch is on.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHECKPOINTS = ROOT / "checkpoints"
# The everyday models (trained on Tatoeba: text as people type it) first, then the grammar models (trained on
# the generated corpora, which tell the textbook stories best), each with the label the picker shows.
SHIPPED_LABELS = {
    "everyday-en-fr": "everyday-en-fr · English → French, real sentences (Tatoeba)",
    "everyday-de-en": "everyday-de-en · German → English, real sentences (Tatoeba)",
    "everyday-en-fr-aligned": "everyday-en-fr-aligned · one cross-attention head trained to align",
    "everyday-de-en-aligned": "everyday-de-en-aligned · one cross-attention head trained to align",
    "en-fr": "en-fr · English → French, grammar corpus",
    "de-en": "de-en · German → English, grammar corpus",
    "spoken-grammar": "spoken-grammar · English speech → text (a Whisper), the grammar corpus spoken by espeak-ng",
    "everyday-en-fr-no-causal-mask": "everyday-en-fr-no-causal-mask · broken: no causal mask",
    "everyday-en-fr-no-shift": "everyday-en-fr-no-shift · broken: no right shift",
    "en-fr-no-causal-mask": "en-fr-no-causal-mask · broken: no causal mask",
    "en-fr-no-shift": "en-fr-no-shift · broken: no right shift",
    "en-fr-no-scaling": "en-fr-no-scaling · broken: no 1/√d_k scaling",
}
SHIPPED = tuple(SHIPPED_LABELS)
DEFAULT = ("everyday-en-fr", "en-fr")  # the first of these that is installed opens when nothing else is asked
ENV_DIRS = "LENS_MODEL_DIRS"
ENV_DEFAULT = "LENS_DEFAULT_MODEL"
ENV_HF = "LENS_HF_MODELS"
ENV_HUB = "LENS_ALLOW_HUB"
ENV_ANY_FOLDER = "LENS_ALLOW_ANY_FOLDER"
FOLDER_KEY = "folder:"  # prefix of the key of a folder typed into the page (single-user mode only)
# A hub id as the hub spells it: "name" or "owner/name", letters, digits, "-", "_", "." (no "..", no leading ".").
HUB_ID = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][\w.-]*(/[A-Za-z0-9][\w.-]*)?$")


@dataclass(frozen=True)
class ModelEntry:
    key: str  # what the page's picker stores; unique
    path: Path  # the folder load_engine opens
    origin: str  # "shipped" | "operator" | "huggingface" | "hub" | "folder"
    label: str = ""
    hub_id: str | None = None  # a Hugging Face hub id, opened only when the operator allows the hub

    @property
    def spec(self) -> str | Path:
        """What `model.engine.loader.load_engine` opens: the folder, or the hub id."""
        return self.hub_id or self.path

    @property
    def title(self) -> str:
        return self.label or self.key


def shipped_entries(root: Path = CHECKPOINTS) -> list[ModelEntry]:
    """Shipped checkpoints that are there (a folder still being trained into has no config.json yet)."""
    return [ModelEntry(name, root / name, "shipped", SHIPPED_LABELS[name]) for name in SHIPPED
            if (root / name / "config.json").is_file()]


def operator_entries(env: dict[str, str] | None = None) -> list[ModelEntry]:
    env = os.environ if env is None else env
    out = []
    for raw in env.get(ENV_DIRS, "").split(os.pathsep):
        if raw.strip():
            path = Path(raw.strip()).expanduser().resolve()
            out.append(ModelEntry(path.name, path, "operator", f"{path.name} (operator)"))
    return out


def _on(name: str, env: dict[str, str] | None = None) -> bool:
    env = os.environ if env is None else env
    return env.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def hub_allowed(env: dict[str, str] | None = None) -> bool:
    return _on(ENV_HUB, env)


def any_folder_allowed(env: dict[str, str] | None = None) -> bool:
    return _on(ENV_ANY_FOLDER, env)


def huggingface_entries(env: dict[str, str] | None = None) -> list[ModelEntry]:
    """"Your model": each item of LENS_HF_MODELS is a folder when one exists there (or it is written as a path),
    otherwise a hub id (listed even with the hub off, so that choosing it explains how to allow it)."""
    env = os.environ if env is None else env
    out = []
    for raw in env.get(ENV_HF, "").split(os.pathsep):
        raw = raw.strip()
        if not raw:
            continue
        path = Path(raw).expanduser()
        if path.is_dir() or raw.startswith((".", "/", "~")) or not HUB_ID.match(raw):
            path = path.resolve()
            out.append(ModelEntry(path.name, path, "huggingface", f"{path.name} (your model)"))
        else:
            out.append(ModelEntry(raw, Path(raw), "hub", f"{raw} (hub)", hub_id=raw))
    return out


SOURCES: list[Callable[[], list[ModelEntry]]] = [shipped_entries, operator_entries, huggingface_entries]


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
            out.append(entry if key == entry.key else ModelEntry(key, entry.path, entry.origin, entry.label,
                                                                 entry.hub_id))
    return out


def default_key(available: list[ModelEntry] | None = None) -> str | None:
    """`LENS_DEFAULT_MODEL` (a key or a folder path of an entry), else the everyday en-fr, else the grammar
    en-fr, else the first."""
    available = entries() if available is None else available
    if not available:
        return None
    wanted = os.environ.get(ENV_DEFAULT, "").strip()
    if wanted:
        for e in available:
            if wanted == e.key or Path(wanted).expanduser().resolve() == e.path:
                return e.key
    keys = [e.key for e in available]
    return next((k for k in DEFAULT if k in keys), keys[0])


def folder_key(text: str) -> str:
    """The key of a folder typed into the page (single-user mode): `folder:` and its absolute path."""
    return FOLDER_KEY + str(Path(text.strip()).expanduser().resolve())


def resolve(key: str, available: list[ModelEntry] | None = None) -> ModelEntry:
    """The entry with this key; KeyError for anything else (so a crafted value opens nothing). A `folder:` key
    resolves only when the operator has set LENS_ALLOW_ANY_FOLDER=1."""
    for e in entries() if available is None else available:
        if e.key == key:
            return e
    if isinstance(key, str) and key.startswith(FOLDER_KEY) and any_folder_allowed():
        path = Path(key[len(FOLDER_KEY):])
        if path.is_absolute():
            return ModelEntry(key, path, "folder", f"{path.name} (folder)")
    raise KeyError(key)
