"""A Hugging Face folder's weights checked against its config before the model is allocated: the model built
on the meta device (`AutoModelForSeq2SeqLM.from_config`, or a speech family's AutoModelForSpeechSeq2Seq, under
`torch.device("meta")`: shapes, no storage), its size against the limit, and every safetensors header (one file or
the shards of an index), its length bounded by the tensors the skeleton has (model.engine.safety.read_header),
compared with it."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import torch
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.safety import check_layers, check_size, compare, module_shapes, read_header

INDEX = "model.safetensors.index.json"


def weight_files(folder: Path) -> list[Path]:
    """model.safetensors, or the shards an index names (plain file names inside the folder only)."""
    if (folder / "model.safetensors").is_file():
        return [folder / "model.safetensors"]
    try:
        weight_map = json.loads((folder / INDEX).read_text())["weight_map"]
        names = sorted(set(weight_map.values()))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
        raise CheckpointError(f"{folder / INDEX} is not a safetensors index ({exc})") from exc
    for name in names:
        if not isinstance(name, str) or Path(name).name != name or not (folder / name).is_file():
            raise CheckpointError(f"{folder / INDEX} names a shard {name!r} that is not a file in the folder")
    return [folder / name for name in names]


def _matches(name: str, patterns: Any) -> bool:
    return any(re.search(p, name) for p in patterns or ())


SPEECH_FAMILIES = ("whisper",)  # speech-to-text encoder-decoders this adapter opens (model.hf.whisper)


def auto_class(config: Any) -> Any:
    """The transformers Auto class that builds the config's model: a speech family's (Whisper:
    AutoModelForSpeechSeq2Seq) or a text encoder-decoder's (AutoModelForSeq2SeqLM)."""
    from transformers import AutoModelForSeq2SeqLM, AutoModelForSpeechSeq2Seq

    return AutoModelForSpeechSeq2Seq if config.model_type in SPEECH_FAMILIES else AutoModelForSeq2SeqLM


def check_weights(config: Any, folder: Path, spec: str) -> None:
    """Raise CheckpointError, naming the disagreement or the limit, before any real allocation."""
    check_layers(spec, **{k: v for k, v in config.to_dict().items() if "layers" in k and isinstance(v, int)})
    files = weight_files(folder)
    try:
        with torch.device("meta"):
            skeleton = auto_class(config).from_config(config, attn_implementation="eager")
    except (ValueError, TypeError, RuntimeError, AttributeError) as exc:
        raise CheckpointError(f"{spec}: config.json does not describe a model that can be built ({exc})") from exc
    expected, tied, n_params = module_shapes(skeleton)
    check_size(spec, n_params, sum(f.stat().st_size for f in files))
    found: dict[str, tuple[str, tuple[int, ...]]] = {}
    for f in files:  # each header bounded by the tensors the config implies, before it is read
        found.update(read_header(f, len(expected)))
    prefix = f"{skeleton.base_model_prefix}."
    if found and not set(found) & set(expected) and all(prefix + k in expected for k in found):
        found = {prefix + k: v for k, v in found.items()}  # a base model's weights, as from_pretrained reads them
    found = {k: v for k, v in found.items() if not _matches(k, skeleton._keys_to_ignore_on_load_unexpected)}
    expected = {k: v for k, v in expected.items()
                if k in found or not _matches(k, skeleton._keys_to_ignore_on_load_missing)}
    compare(spec, expected, found, tied)
