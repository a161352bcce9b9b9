"""Work run ahead on worker threads, its results handed back in input order (`ahead`).

A small model's batched pass on the CPU spends nearly all its time in torch kernels (matrix products), which
release the GIL. So while `workers` threads each run the next batch's pass at one intra-op thread, the calling
thread reads the results of the batches before (Python and small numpy arrays, which hold the GIL): on a
2-core machine two passes and the reading share the cores, where one pass on 2 intra-op threads leaves a core
idle while the results are read and, on a busy machine, spins OpenMP threads waiting for their siblings.

At most `workers + 1` items are taken from `items` ahead of the one handed back, so memory stays bounded. An
exception raised by `work` is raised again in the calling thread when that item's turn comes (the items before
it are handed back first); the items not yet started are then cancelled, and the ones running are waited for.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")
R = TypeVar("R")


def ahead(work: Callable[[T], R], items: Iterable[T], workers: int) -> Iterator[R]:
    """work(item) for every item, in order; with workers >= 1, computed on that many threads, ahead of the
    caller (workers < 1: computed here, one at a time, when asked for)."""
    if workers < 1:
        yield from map(work, items)
        return
    pending: deque[Future[R]] = deque()
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ahead") as pool:
        try:
            for item in items:
                pending.append(pool.submit(work, item))
                if len(pending) > workers:
                    yield pending.popleft().result()
            while pending:
                yield pending.popleft().result()
        finally:
            for future in pending:
                future.cancel()
