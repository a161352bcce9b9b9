"""What one full garbage collection costs in a server process, before and after gc.freeze().

Streamlit runs gc.collect(2) after every script run, fragment runs included (`runner.postScriptGC`). This imports
what the app's pages import (streamlit, torch through the engine, pandas, plotly), loads the shipped en-fr model,
counts the objects the collector tracks and times full collections, then freezes them as app/streamlit_app.py
does and times again. One JSON line.

    .venv/bin/python benchmarks/gc_cost.py
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "app")]


def collect_ms(repeats: int = 7) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        gc.collect(2)
        times.append((time.perf_counter() - t0) * 1000)
    return round(statistics.median(times), 1)


def main() -> None:
    import common  # noqa: F401  (streamlit, the engine and torch)
    import figures  # noqa: F401  (plotly)
    import pandas  # noqa: F401

    from model.builtin import BuiltinEngine

    BuiltinEngine.load(ROOT / "checkpoints" / "en-fr")
    before = {"tracked_objects": len(gc.get_objects()), "full_collect_ms": collect_ms()}
    gc.collect()
    gc.freeze()
    after = {"frozen_objects": gc.get_freeze_count(), "tracked_objects": len(gc.get_objects()),
             "full_collect_ms": collect_ms()}
    print(json.dumps({"before_freeze": before, "after_freeze": after}))


if __name__ == "__main__":
    main()
