"""How long does a PNG or SVG export of a view take? Each export starting its own Chromium (plotly.io.to_image
with no kaleido server, the previous code) against app.exports.image (one kaleido browser per server process,
started by the first export). One process, same figure: the Explore page's default view (cross-attention, all
layers x heads) of the shipped en-fr model, step 10 of the load test's sentence.

    .venv/bin/python -m benchmarks.export_speed --n 5
    .venv/bin/python -m benchmarks.export_speed --quick      # one export of each kind each way

Prints one JSON line: per format, the medians of the old way and of the new way after its first export, and
the new way's first export (which starts the browser).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import plotly.io as pio
from attention_lens.app import exports
from attention_lens.app.render import figures, views
from attention_lens.model.engine import DecodeOptions, load_engine

from harness.server import ROOT

TEXT = "the black cat that the small dog chased sat on the mat near the bank of the river ."


def timed(fn, *args, **kwargs) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5, help="exports of each format each way")
    parser.add_argument("--quick", action="store_true", help="one export of each format each way")
    args = parser.parse_args(argv)
    if args.quick:
        args.n = 1
    if not exports.image_export_available():
        sys.exit("no Chrome/Chromium for kaleido")
    trace = load_engine(str(ROOT / "checkpoints" / "en-fr")).trace(TEXT, options=DecodeOptions())
    fig = views.attention_figure(trace, "cross_attention", "grid", 10)
    width = figures.WIDTH + 100
    result: dict[str, dict] = {}
    for fmt in ("png", "svg"):
        scale = 2.0 if fmt == "png" else 1.0
        old = [timed(pio.to_image, fig, format=fmt, width=width, scale=scale) for _ in range(args.n)]
        result[fmt] = {"old_median_s": round(statistics.median(t for t, _ in old), 3)}
    for fmt in ("png", "svg"):  # the new way: the first export of the process starts the browser
        new = [timed(exports.image, fig, fmt) for _ in range(args.n + 1)]
        if fmt == "png":
            result[fmt]["new_first_s"] = round(new[0][0], 3)
            new = new[1:]
        result[fmt]["new_median_s"] = round(statistics.median(t for t, _ in new), 3)
        result[fmt]["new_max_s"] = round(max(t for t, _ in new), 3)
        result[fmt]["bytes"] = len(new[-1][1])
    print(json.dumps({"n": args.n, **result}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
