"""A head set handed back as a model's own: `alignment_heads` written into a copy of its generation_config.json.

`transformers` reads `generation_config.alignment_heads` ([[layer, head], ...], 0-based) when
`generate(..., return_token_timestamps=True)` or the ASR pipeline's word timestamps ask for token times; the copy
keeps every other key of the model's file, so `GenerationConfig.from_pretrained` loads it as it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Any

from attention_lens.model.engine.errors import ModelInputError

NAME = "generation_config.json"


def with_alignment_heads(config: dict[str, Any], heads: Sequence[Sequence[int]]) -> dict[str, Any]:
    """A copy of a generation config (as a dict) with `alignment_heads` set."""
    if not heads:
        raise ModelInputError("no alignment heads to write (the head set is empty)")
    out = dict(config)
    out["alignment_heads"] = [[int(layer), int(head)] for layer, head in heads]
    return out


def read_generation_config(model_folder: str) -> dict[str, Any]:
    """The model folder's generation_config.json as a dict; ModelInputError naming the folder without one."""
    path = os.path.join(model_folder, NAME)
    if not os.path.isfile(path):
        raise ModelInputError(f"{model_folder}: no {NAME} to copy (a Whisper folder has one)")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except (OSError, json.JSONDecodeError) as exc:
        raise ModelInputError(f"{path}: not a JSON generation config ({exc})") from None
    if not isinstance(config, dict):
        raise ModelInputError(f"{path}: not a JSON object")
    return config


def write_generation_config(model_folder: str, heads: Sequence[Sequence[int]], out: str) -> dict[str, Any]:
    """Write the model's generation config with `alignment_heads` = heads to `out` (a .json file, or a folder:
    then out/generation_config.json); return what was written."""
    config = with_alignment_heads(read_generation_config(model_folder), heads)
    path = os.path.join(out, NAME) if os.path.isdir(out) else out
    with open(path, "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, sort_keys=True)
        f.write("\n")
    return config
