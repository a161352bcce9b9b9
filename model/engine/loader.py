"""Open any model folder as an Engine: this project's checkpoints, or a Hugging Face seq2seq model.

Whatever goes wrong while opening a folder reaches the caller as a CheckpointError with a plain message (the CLI
prints it, the app's model picker shows it): a folder is input, and hostile input must not end in a traceback.
"""

from __future__ import annotations

from pathlib import Path

import torch
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.device import resolve_device, resolve_dtype
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.safety import check_folder


def load_engine(spec: str | Path, allow_hub: bool = False, device: str | torch.device | None = "cpu",
                dtype: str | torch.dtype | None = None) -> Engine:
    """spec: a folder, or (with allow_hub) a Hugging Face hub id. Raises CheckpointError with a plain message.
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
    raise CheckpointError(f"{spec}: no such model folder")
