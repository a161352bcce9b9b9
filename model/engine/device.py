"""Where a model runs and in which float type: `--device auto|cpu|cuda[:N]|mps`, `--dtype float32|float16|bfloat16`
(the CLI), `LENS_DEVICE` / `LENS_DTYPE` (the app), the `device=` / `dtype=` arguments of `load_engine`.

A device or type is chosen once, when the engine is loaded: the model's weights are placed there, every input a
forward pass builds is moved to the model's device, and what a run returns (RawRun, Trace) is always CPU numpy
float32. A device that is asked for and is not there is a `DeviceError` (a ValueError: one `error:` line in the
CLI, a notice in the app), never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch

DEVICE_CHOICES = "auto, cpu, cuda, cuda:N or mps"
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
CPU = torch.device("cpu")


class DeviceError(ValueError):
    """A device or float type that cannot be used here, said in one sentence."""


def _mps_available() -> bool:
    backend = getattr(torch.backends, "mps", None)
    return bool(backend is not None and backend.is_available())


def resolve_device(name: str | torch.device | None = "auto") -> torch.device:
    """"auto" (or None / ""): the first CUDA GPU when torch sees one, else Apple's MPS, else the CPU. A named
    device is checked: raise DeviceError when it is absent (no CUDA GPU, an index past the GPUs, no MPS)."""
    if isinstance(name, torch.device):
        name = str(name)
    text = (name or "auto").strip().lower()
    if text == "auto":
        if torch.cuda.is_available():
            return torch.device("cuda", 0)
        return torch.device("mps") if _mps_available() else CPU
    if text == "cpu":
        return CPU
    if text == "cuda" or text.startswith("cuda:"):
        index_text = text[5:] if text.startswith("cuda:") else "0"
        if not index_text.isdigit():
            raise DeviceError(f"device {name!r}: a CUDA device is cuda or cuda:N with N a GPU number")
        if not torch.cuda.is_available():
            build = "this torch build has no CUDA support" if torch.version.cuda is None else \
                "torch sees no CUDA GPU on this machine"
            raise DeviceError(f"device {name!r} asked for, but {build}; use --device cpu (or auto)")
        count, index = torch.cuda.device_count(), int(index_text)
        if index >= count:
            raise DeviceError(f"device {name!r} asked for, but this machine has {count} CUDA GPU"
                              f"{'s' * (count != 1)} (cuda:0 to cuda:{count - 1})")
        return torch.device("cuda", index)
    if text == "mps":
        if not _mps_available():
            raise DeviceError(f"device {name!r} asked for, but Apple's MPS backend is not available here; use "
                              f"--device cpu (or auto)")
        return torch.device("mps")
    raise DeviceError(f"device {name!r} is not one of {DEVICE_CHOICES}")


def resolve_dtype(name: str | torch.dtype | None) -> torch.dtype:
    """None / "" -> float32; "float16" / "bfloat16" / "float32" (also "fp16", "bf16", "fp32", "half")."""
    if isinstance(name, torch.dtype):
        if name not in DTYPES.values():
            raise DeviceError(f"dtype {name} is not one of {', '.join(DTYPES)}")
        return name
    text = (name or "float32").strip().lower()
    text = {"fp32": "float32", "fp16": "float16", "half": "float16", "bf16": "bfloat16"}.get(text, text)
    if text not in DTYPES:
        raise DeviceError(f"dtype {name!r} is not one of {', '.join(DTYPES)}")
    return DTYPES[text]


def dtype_name(dtype: torch.dtype) -> str:
    """torch.bfloat16 -> "bfloat16"."""
    return str(dtype).removeprefix("torch.")


def device_name(device: torch.device) -> str:
    """The device as the Trace records it: "cpu", "cuda:0", "mps"."""
    if device.type == "cuda":
        return f"cuda:{device.index or 0}"
    return device.type


def cpu_threads(asked: int | None = None) -> int:
    """Threads for the CPU's intra-op work: `asked` when given (at least 1), otherwise the cores that are idle
    now (os.cpu_count() less the 1-minute load average, rounded), at least 1 and at most torch's own default. On
    a shared machine busier than its cores, OpenMP threads wait spinning for siblings the kernel has paused: a
    300-line teacher-forced pass of everyday de-en took 9.5 s of CPU with 2 threads and 1.3 s with 1 at a load
    average of ~20 on 2 cores (benchmarks/RESULTS.md, part 20); on an idle machine this is torch's default."""
    import os

    if asked is not None:
        if asked < 1:
            raise ValueError("--threads must be at least 1")
        return asked
    try:
        idle = (os.cpu_count() or 1) - round(os.getloadavg()[0])
    except OSError:  # no load average on this system
        return torch.get_num_threads()
    return max(1, min(torch.get_num_threads(), idle))


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op threads set to `n` for the block (None: left as they are) and set back after it, so that
    a command run in the same process as other work (a test, a notebook) leaves their thread count as it was."""
    before = torch.get_num_threads()
    if n is not None:
        torch.set_num_threads(n)
    try:
        yield
    finally:
        if torch.get_num_threads() != before:
            torch.set_num_threads(before)
