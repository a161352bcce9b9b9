"""Checks that run before any memory is allocated for a model: a size limit, the safetensors header read on its
own (never the tensors), and the header compared tensor by tensor with the shapes the config implies.

A folder of a few kilobytes can claim a model of any size in its config.json; a loader that believes it tries to
allocate it. Both engines therefore build the model on PyTorch's meta device (shapes, no storage), compare
that with the header, and only then load.
"""

from __future__ import annotations

import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path

from model.engine.errors import CheckpointError

ENV_MAX_MB = "LENS_MAX_MODEL_MB"
DEFAULT_MAX_MB = 2048
MAX_LAYERS = 128  # more layers than any seq2seq model published; building even the meta model would take long
MAX_HEADER_BYTES = 100 * 2**20
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


def read_header(path: Path) -> dict[str, tuple[str, tuple[int, ...]]]:
    """A safetensors file's header (name -> (dtype, shape)), read without reading any tensor, checked against
    the file's size: every tensor's bytes must be where the header says and as many as its shape needs."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) < 8:
            raise CheckpointError(f"{path} is corrupt or truncated: shorter than a safetensors header")
        (n,) = struct.unpack("<Q", head)
        if n > min(MAX_HEADER_BYTES, size - 8):
            raise CheckpointError(f"{path} is corrupt or truncated: its safetensors header claims {n:,} bytes, more "
                                  f"than the file holds or {MAX_HEADER_BYTES // 2**20} MB")
        raw = f.read(n)
    try:
        header = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
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
