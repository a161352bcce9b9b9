"""Checks that run before any memory is allocated for a model: a size limit, the safetensors header read on its
own (never the tensors), and the header compared tensor by tensor with the shapes the config implies.

A folder of a few kilobytes can claim a model of any size in its config.json; a loader that believes it tries to
allocate it. Both engines therefore build the model on PyTorch's meta device (shapes, no storage), compare
that with the header, and only then load.

The header is bounded by the config too, before a byte of it is parsed: a model of k tensors has a header of at
most `header_budget(k)` bytes, nested three deep (the header object, one tensor's entry, its shape and offsets).
A 100 MB header of 1.7 M entries would otherwise be parsed into about 1.3 GB of Python objects, and a header of
arrays nested 100,000 deep overflows the recursion of Python's JSON parser. Every file of a folder is a regular
file inside it: a device (a link to /dev/zero never ends) or a link out of the folder is refused by name.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
from attention_lens.model.engine.errors import CheckpointError, refuse_pickles

ENV_MAX_MB = "LENS_MAX_MODEL_MB"
# As float32: the multilingual models people debug fit (NLLB-200-distilled-600M and mBART-large-50 2.3 GiB,
# M2M-100 1.2B 4.6 GiB, NLLB-200 1.3B 5.1 GiB); a config claiming more is refused before anything is allocated.
DEFAULT_MAX_MB = 8192
MAX_LAYERS = 128  # more layers than any seq2seq model published; building even the meta model would take long
MAX_HEADER_BYTES = 100 * 2**20
# A header entry is a tensor's name, dtype, shape and offsets: under 200 bytes for every model we know (the longest
# Hugging Face names are ~70 characters); __metadata__ holds a few short strings ({"format": "pt"}).
ENTRY_BYTES = 1024
METADATA_BYTES = 64 * 2**10
MAX_NESTING = 3  # {name: {"dtype": ..., "shape": [...], "data_offsets": [...]}}
STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.S)
NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
ITEMSIZE = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I64": 8, "I32": 4, "I16": 2,
            "I8": 1, "U8": 1, "BOOL": 1, "U16": 2, "U32": 4, "U64": 8}
FLOATS = {"F64", "F32", "F16", "BF16"}
DISAGREE = "config.json disagrees with the weights"
Shapes = Mapping[str, tuple[tuple[int, ...], bool]]  # name -> (shape, is floating point)


def max_bytes() -> int:
    raw = os.environ.get(ENV_MAX_MB, "").strip()
    try:
        mb = float(raw) if raw else DEFAULT_MAX_MB
    except ValueError:
        raise CheckpointError(f"{ENV_MAX_MB}={raw!r} is not a number of megabytes") from None
    return int(mb * 2**20)


def _limit_hint() -> str:
    return (f"the limit is {max_bytes() / 2**20:.0f} MB ({ENV_MAX_MB}, default {DEFAULT_MAX_MB}); the server's "
            f"operator can raise it, e.g. {ENV_MAX_MB}=8192, if the machine has the memory")


def check_layers(spec: str, **counts: int | None) -> None:
    """Refuse absurd layer counts before even the meta model is built (that takes time per layer)."""
    for name, value in counts.items():
        if isinstance(value, int) and value > MAX_LAYERS:
            raise CheckpointError(f"{spec}: config.json claims {name}={value}, more than {MAX_LAYERS} layers; "
                                  f"this tool refuses such a model before building it")


def check_size(spec: str, n_params: int, file_bytes: int) -> None:
    """The model as float32 (what the engines compute in) and its weight files, each against the limit."""
    limit = max_bytes()
    implied = n_params * 4
    if implied > limit:
        raise CheckpointError(f"{spec}: config.json implies {n_params:,} parameters ({implied / 2**30:.1f} GB as "
                              f"float32), over the model size limit: {_limit_hint()}")
    if file_bytes > limit:
        raise CheckpointError(f"{spec}: its weight files hold {file_bytes / 2**30:.1f} GB, over the model size "
                              f"limit: {_limit_hint()}")


def check_folder_files(folder: Path) -> None:
    """Refuse a folder holding a device, a pipe or a socket, or a link that leads out of it, naming the file: a
    loader reads its files whole (a link to /dev/zero never ends) and must not read files beyond the folder."""
    root = folder.resolve()
    for entry in sorted(folder.iterdir()):
        try:
            target = entry.resolve(strict=True)
            mode = target.stat().st_mode
        except (OSError, RuntimeError):  # a dangling link or a loop of links
            raise CheckpointError(f"{entry} is a broken link (it leads to no file); refused") from None
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            what = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
            link = f" (a link to {target})" if entry.is_symlink() else ""
            raise CheckpointError(f"{entry} is {what}{link}, not a file of weights or settings; refused")
        if entry.is_symlink() and not target.is_relative_to(root):
            raise CheckpointError(f"{entry} is a link to {target}, outside the model folder; a model folder must "
                                  f"hold its own files (copy the file into the folder)")


def check_folder(folder: Path) -> None:
    """What every family's folder passes first: not empty, only regular files inside it (check_folder_files),
    not only pickle weights (refuse_pickles)."""
    if not any(folder.iterdir()):
        raise CheckpointError(f"{folder} is an empty folder, not a model")
    check_folder_files(folder)
    refuse_pickles(folder)


def header_budget(n_tensors: int) -> int:
    """The most bytes a safetensors header of n tensors can need (generous: ENTRY_BYTES each, METADATA_BYTES)."""
    return METADATA_BYTES + ENTRY_BYTES * n_tensors


def nesting(raw: bytes) -> int:
    """How deep JSON text nests its arrays and objects (brackets inside strings not counted), without parsing."""
    brackets = np.frombuffer(STRINGS.sub(b"", raw).translate(None, NOT_BRACKETS), dtype=np.uint8)
    if not brackets.size:
        return 0
    steps = np.where((brackets == ord("[")) | (brackets == ord("{")), 1, -1)
    return int(np.cumsum(steps).max())


def read_header(path: Path, n_tensors: int | None = None) -> dict[str, tuple[str, tuple[int, ...]]]:
    """A safetensors file's header (name -> (dtype, shape)), read without reading any tensor, checked against
    the file's size: every tensor's bytes must be where the header says and as many as its shape needs.
    n_tensors: how many tensors the config implies; a header longer than they can need, or nested deeper than
    a safetensors header is, is refused before it is read (time and memory bounded by the config, not the file)."""
    check_folder_files(path.parent)
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path} is corrupt or truncated: shorter than a safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > min(MAX_HEADER_BYTES, size - 8):
            raise CheckpointError(f"{path} is corrupt or truncated: its safetensors header claims {n:,} bytes, more "
                                  f"than the file holds or {MAX_HEADER_BYTES // 2**20} MB")
        if n_tensors is not None and n > header_budget(n_tensors):
            raise CheckpointError(f"{path}: its safetensors header is {n:,} bytes, more than the {n_tensors:,} "
                                  f"tensors config.json implies can need ({header_budget(n_tensors):,} bytes); "
                                  f"refused without reading it")
        raw = f.read(n)
    depth = nesting(raw)
    if depth > MAX_NESTING:
        raise CheckpointError(f"{path} is corrupt or hostile: its safetensors header nests JSON {depth:,} levels "
                              f"deep, a safetensors header {MAX_NESTING}; refused without parsing it")
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise CheckpointError(f"{path} is corrupt or truncated: its header is not JSON ({exc})") from exc
    if not isinstance(header, dict):
        raise CheckpointError(f"{path} is corrupt or truncated: its header is not a JSON object")
    data_bytes = size - 8 - n
    out = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype, shape, (start, end) = entry["dtype"], tuple(entry["shape"]), entry["data_offsets"]
            ok = dtype in ITEMSIZE and all(isinstance(d, int) and d >= 0 for d in (*shape, start, end))
        except (KeyError, TypeError, ValueError):
            ok = False
        if not ok:
            raise CheckpointError(f"{path} is corrupt or truncated: the header entry of {name!r} is malformed")
        need = math.prod(shape) * ITEMSIZE[dtype]
        if end - start != need or end > data_bytes:
            raise CheckpointError(f"{path} is corrupt or truncated: its header says tensor {name} is {dtype} "
                                  f"{list(shape)} ({need:,} bytes) at bytes {start}-{end}, but the file holds "
                                  f"{data_bytes:,} bytes of data")
        out[name] = (dtype, shape)
    return out


def compare(spec: str, expected: Shapes, found: Mapping[str, tuple[str, tuple[int, ...]]],
            tied: Iterable[set[str]] = ()) -> None:
    """Refuse, naming the first disagreement, unless the weights are exactly what the config implies: the same
    tensor names (a name missing from the file is fine only if a weight tied to it is there), the same shapes,
    floating-point weights where the model has floating-point ones."""
    unexpected = sorted(set(found) - set(expected))
    if unexpected:
        raise CheckpointError(f"{spec}: {DISAGREE}: the weights file holds {len(unexpected)} tensor(s) the config "
                              f"does not imply, e.g. {unexpected[0]} {list(found[unexpected[0]][1])}")
    groups = {name: group for group in tied for name in group}
    missing = sorted(k for k in set(expected) - set(found) if not groups.get(k, set()) & set(found))
    if missing:
        raise CheckpointError(f"{spec}: {DISAGREE}: the weights file lacks {len(missing)} tensor(s) the config "
                              f"implies, e.g. {missing[0]} {list(expected[missing[0]][0])}")
    for name, (dtype, shape) in sorted(found.items()):
        want, floating = expected[name]
        if tuple(shape) != tuple(want):
            raise CheckpointError(f"{spec}: {DISAGREE}: weight {name} has shape {list(shape)} in the weights "
                                  f"file but config.json implies {list(want)}")
        if floating != (dtype in FLOATS):
            raise CheckpointError(f"{spec}: {DISAGREE}: weight {name} is stored as {dtype}, but the model needs "
                                  f"{'floating-point' if floating else 'integer'} values there")


def module_shapes(module) -> tuple[dict[str, tuple[tuple[int, ...], bool]], list[set[str]], int]:
    """A (meta) module's state: name -> (shape, floating), the groups of names tied to one parameter, and its
    parameter count (each tied parameter once)."""
    shapes = {k: (tuple(v.shape), v.is_floating_point()) for k, v in module.state_dict().items()}
    by_param: dict[int, set[str]] = {}
    for name, p in module.named_parameters(remove_duplicate=False):
        by_param.setdefault(id(p), set()).add(name)
    return shapes, [g for g in by_param.values() if len(g) > 1], sum(p.numel() for p in module.parameters())
