"""Open any model folder as an Engine: this project's checkpoints, or a Hugging Face seq2seq model.

A model is named by its folder, or by a shipped model's name ("everyday-en-fr") from any working folder: a name
that is not a folder here is looked up in each folder of LENS_CHECKPOINTS (os.pathsep-separated), then in
./checkpoints/, then in the checkpoints/ folder beside this package (the repository's in a checkout, the copy an
installed wheel carries: the default model only).

Whatever goes wrong while opening a folder reaches the caller as a CheckpointError with a plain message (the CLI
prints it, the app's model picker shows it): a folder is input, and hostile input must not end in a traceback.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from pathlib import Path

import torch
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.device import resolve_device, resolve_dtype
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.safety import check_folder

ENV_CHECKPOINTS = "LENS_CHECKPOINTS"
# The shipped models' folder beside app/ and model/: the repository's checkpoints/, or an installed wheel's
# attention_lens/checkpoints/ (pyproject.toml maps it there).
PACKAGED = Path(__file__).resolve().parents[2] / "checkpoints"
# A model's name, as a folder of checkpoints/ is named: no path separators, no leading dot.
NAME = re.compile(r"^[A-Za-z0-9][\w.-]*$")


def checkpoint_folders(env: Mapping[str, str] | None = None) -> list[Path]:
    """Where a model named by name is looked for, first match wins: LENS_CHECKPOINTS' folders, ./checkpoints/,
    the package's checkpoints/."""
    env = os.environ if env is None else env
    named = [Path(raw.strip()).expanduser() for raw in env.get(ENV_CHECKPOINTS, "").split(os.pathsep) if raw.strip()]
    return [*named, Path("checkpoints"), PACKAGED]


def find_named(name: str, env: Mapping[str, str] | None = None) -> Path | None:
    """The folder of the model called `name` (a folder name such as "everyday-en-fr") in checkpoint_folders, or
    None when no folder there has it (or `name` is not a plain name)."""
    if not NAME.match(name):
        return None
    return next((folder / name for folder in checkpoint_folders(env) if (folder / name).is_dir()), None)


def load_engine(spec: str | Path, allow_hub: bool = False, device: str | torch.device | None = "cpu",
                dtype: str | torch.dtype | None = None) -> Engine:
    """spec: a folder, a model's name (find_named), or (with allow_hub) a Hugging Face hub id. Raises
    CheckpointError with a plain message.
    device: where the model runs ("auto", "cpu", "cuda[:N]", "mps"; model.engine.device), dtype: its weights'
    float type (None: float32); a device that is absent raises DeviceError before anything is read."""
    where, kind = resolve_device(device), resolve_dtype(dtype)
    try:
        return _load(spec, allow_hub, where, kind)
    except CheckpointError:
        raise
    except Exception as exc:  # a library's own error on a malformed file (any type): said in one line
        raise CheckpointError(f"{spec} cannot be opened as a model ({type(exc).__name__}: {exc})") from exc


def _load(spec: str | Path, allow_hub: bool, device: torch.device, dtype: torch.dtype) -> Engine:
    path = Path(spec)
    if not path.exists() and isinstance(spec, str):
        path = find_named(spec) or path
    if path.is_dir():
        check_folder(path)
        from attention_lens.model.builtin.checkpoint import is_builtin_checkpoint

        if is_builtin_checkpoint(path):
            from attention_lens.model.builtin.engine import BuiltinEngine

            return BuiltinEngine.load(path, device=device, dtype=dtype)
        if (path / "config.json").is_file():
            from attention_lens.model.hf.engine import HFEngine

            return HFEngine.load(str(path), device=device, dtype=dtype)
        raise CheckpointError(f"{path} is not a model folder: it has no config.json")
    if path.exists():
        raise CheckpointError(f"{path} is a file; a model is a folder")
    if allow_hub and "/" in str(spec) and not str(spec).startswith((".", "/")):
        from attention_lens.model.hf.engine import HFEngine

        return HFEngine.load(str(spec), allow_hub=True, device=device, dtype=dtype)
    raise CheckpointError(f"{spec}: no such model folder, nor a model of that name in "
                          f"{', '.join(str(f) for f in checkpoint_folders())} ({ENV_CHECKPOINTS} adds folders)")
