"""Models of the size people really use: a random-weight Marian of opus-mt's dimensions (6 + 6
layers, 8 heads, d_model 512, a 58k SentencePiece vocabulary) and a random-weight T5 of t5-small's, opened
in the app as "your model" (LENS_HF_MODELS). For each:

- load: a fresh process opening the folder with load_engine (seconds, peak RSS in MB);
- server: one Next click under AppTest (script rerun + figures), median of --server-n;
- browser: in Chromium, click Next until the new row is drawn, median of --browser-n, and the websocket bytes
  received per click (median).

Server and browser are measured for two views of cross-attention, each opened by a link (`?text=...&kind=cross`,
so no preset's view hint applies): "default", the view the page opens on by itself (at this size the mean of
the heads, one panel: explore.fast_view), and "grid", every layer x head (6 x 8 = 48 panels), asked for with
`view=grid`. Each row records the view the page really showed.

    .venv/bin/python -m benchmarks.big_models            # builds the models once into tests/fixtures' cache
    .venv/bin/python -m benchmarks.big_models --quick    # opus-mt dimensions with a 2k vocabulary, 3 clicks
    .venv/bin/python -m benchmarks.big_models --models nllb-600m-sized --work --views default --browser-n 0
        # NLLB-200-distilled-600M's dimensions (12 + 12 x 16 heads, d_model 1024, 256k vocabulary): load, one
        # trace's time and bytes, the Heads ranking over two pairs, Next clicks in the page's own (mean) view
    .venv/bin/python -m benchmarks.big_models --models nllb-600m-sized --views default --browser-n 0 --switches 3
        # ... and the server run after a switch of view / head / layer (the hidden pickers a reported view sets)

Targets: step click <= 150 ms on the server, <= 1.5 s to render (NLLB-600M dimensions: opens <= 60 s, a step
<= 500 ms of server time in the mean view). Prints one JSON line per model, with
a "default" and a "grid" row.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from benchmarks.app_latency import SOURCE, next_clicks
from harness.browser import CHROMIUM, ROW_SHOWN, SOURCE_SHOWN, browser_page
from harness.measure import WebsocketBytes, time_next_clicks
from harness.server import ROOT, app_env, served

LOAD = """
import json, sys, time
import torch
torch.set_num_threads(1)
t = time.perf_counter()
from attention_lens.model.engine.loader import load_engine
engine = load_engine(sys.argv[1])
seconds = time.perf_counter() - t
with open("/proc/self/status") as status:  # this memory's own peak (ru_maxrss after exec can be the parent's)
    rss = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
figures = {"load_s": round(seconds, 2), "peak_rss_mb": round(rss), "heads": engine.n_heads,
           "layers": [engine.n_encoder_layers, engine.n_decoder_layers],
           "parameters": engine.card.get("parameters"), "vocab": engine.card.get("vocab_size")}
if len(sys.argv) > 2:  # the trace's size and the Heads ranking's time over a few pairs
    from attention_lens.model.analysis.ablation import rank_heads
    from attention_lens.model.engine import DecodeOptions
    t = time.perf_counter()
    trace = engine.trace(sys.argv[2], options=DecodeOptions(max_len=20))
    figures.update(trace_s=round(time.perf_counter() - t, 2), trace_rows=trace.m,
                   trace_json_bytes=len(trace.to_json().encode()))
    pairs = json.loads(sys.argv[3])
    t = time.perf_counter()
    ranked = rank_heads(engine, [a for a, _ in pairs], [b for _, b in pairs], progress=False)
    figures.update(heads_ranking_s=round(time.perf_counter() - t, 1), heads_ranked=len(ranked["heads"]),
                   heads_pairs=len(pairs))
print(json.dumps(figures))
"""
# NLLB-600M's float32 weights (2.3 GiB), under an explicit model size limit whatever the environment says.
BIG_LIMIT = {"LENS_MAX_MODEL_MB": "4096"}
PAIRS = [["the cat sat on the mat .", "le chat s' assit sur le tapis ."],
         ["the black dog barked at the cat .", "le chien noir aboya contre le chat ."]]


def load_figures(folder: Path, work: bool = False) -> dict:
    """Load time and peak memory in a fresh process; with `work`, also one trace's time and JSON size and the
    Heads ranking's time over PAIRS."""
    extra = [SOURCE, json.dumps(PAIRS)] if work else []
    out = subprocess.run([sys.executable, "-c", LOAD, str(folder), *extra], capture_output=True, text=True,
                         cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), **BIG_LIMIT), timeout=1800)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


VIEWS = {"default": None, "grid": "grid"}  # row name: the view the link names (None: the page's own default)


def link(view: str | None) -> dict[str, str]:
    """The link's query: the benchmark sentence in cross-attention, and the view if one is named."""
    return {"text": SOURCE, "kind": "cross", **({"view": view} if view else {})}


def server_clicks(env: dict[str, str], n: int, view: str | None,
                  switches: int = 0) -> tuple[list[float], str, dict[str, list[float]]]:
    """Seconds per Next click under AppTest (no browser), the view that was shown, and with `switches`, the
    seconds of the server run that follows a switch of view, layer or head (what the page runs when the stepper
    reports the view it shows; in the browser the switch itself is drawn with nothing sent)."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(env)
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=600)  # a loaded machine
    at.query_params.update(link(view))
    at.run()
    clicks, shown = next_clicks(at, n), at.session_state["view_keep"]
    return clicks, shown, view_switches(at, switches) if switches else {}


def view_switches(at, n: int) -> dict[str, list[float]]:
    """Seconds of the server runs of n rounds of: the view to one head, the head to another one, the layer to
    another one, the view back to the mean (the hidden Streamlit pickers that a reported view sets)."""
    def timed(widget, value) -> float:
        t0 = time.perf_counter()
        widget.set_value(value).run()
        if at.exception:
            raise RuntimeError(at.exception[0].message)
        return time.perf_counter() - t0

    out: dict[str, list[float]] = {"to_head": [], "head": [], "layer": [], "to_mean": []}
    for i in range(n):
        out["to_head"].append(timed(at.segmented_control(key="view"), "head"))
        out["head"].append(timed(at.selectbox(key="head"), (12 + i) % len(at.selectbox(key="head").options)))
        out["layer"].append(timed(at.selectbox(key="layer"), (6 + i) % len(at.selectbox(key="layer").options)))
        out["to_mean"].append(timed(at.segmented_control(key="view"), "mean"))
    return out


def browser_clicks(env: dict[str, str], n: int, view: str | None) -> tuple[list[float], list[int], str]:
    """Seconds from a Next click to the new row drawn, and websocket bytes received meanwhile, per click; and
    the view that was shown (from the page's own link)."""
    meter = WebsocketBytes()
    with served(env) as (url, _), browser_page("about:blank") as page:
        meter.attach(page)
        page.goto(f"{url}/?{urlencode(link(view))}")
        page.wait_for_function(SOURCE_SHOWN, arg=["blackcatsatonthemat"], timeout=300_000)
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=300_000)
        clicks = time_next_clicks(page, n, meter=meter, settle_ms=300)
        shown = parse_qs(urlsplit(page.url).query).get("view", ["?"])[0]
    return clicks.seconds, clicks.bytes, shown


def measure(folder: Path, server_n: int, browser_n: int, views: dict[str, str | None] = VIEWS,
            work: bool = False, switches: int = 0) -> dict:
    env = app_env(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name, **BIG_LIMIT)
    result = {"model": folder.name, **load_figures(folder, work)}
    for name, view in views.items():
        started = time.perf_counter()
        server, shown, switched = server_clicks(env, server_n, view, switches)
        row_open = {"page_open_and_clicks_s": round(time.perf_counter() - started, 1)}
        row = {"view": shown, "server_click_median_ms": round(1000 * statistics.median(server)),
               "server_n": len(server), **row_open}
        for what, seconds in switched.items():
            row[f"server_switch_{what}_median_ms"] = round(1000 * statistics.median(seconds))
        if switched:
            row["server_switch_n"] = switches
        if browser_n and Path(CHROMIUM).exists():
            times, sizes, shown = browser_clicks(env, browser_n, view)
            row.update(browser_view=shown, render_median_ms=round(1000 * statistics.median(times)),
                       render_n=len(times), bytes_per_click_median=int(statistics.median(sizes)))
        result[name] = row
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="opus-mt dimensions, 2k vocabulary, few clicks")
    ap.add_argument("--server-n", type=int, default=15)
    ap.add_argument("--browser-n", type=int, default=8)
    ap.add_argument("--models", default="opus-mt-sized,t5-small-sized",
                    help="comma-separated: opus-mt-sized, t5-small-sized, nllb-600m-sized (random weights of "
                         "NLLB-200-distilled-600M's dimensions, 256k vocabulary; built once, ~2.5 GB)")
    ap.add_argument("--work", action="store_true", help="also one trace's time and size and the Heads ranking's "
                                                        "time over two pairs")
    ap.add_argument("--views", default="default,grid", help="comma-separated: default (the page's own), grid")
    ap.add_argument("--switches", type=int, default=0, help="also time the server run after a switch of view, "
                                                            "head and layer, this many rounds (AppTest)")
    args = ap.parse_args(argv)
    from harness.models import hf_big

    if args.quick:
        folders = [hf_big.build_marian_sized(Path(tempfile.mkdtemp()) / "opus-mt-dims-2k", vocab=2000,
                                             sentences=5000)]
        args.server_n, args.browser_n, args.switches = 3, 0, min(args.switches, 1)
    else:
        folders = [hf_big.cached(name) for name in args.models.split(",")]
    views = {k: v for k, v in VIEWS.items() if k in args.views.split(",")}
    for folder in folders:
        print(json.dumps(measure(folder, args.server_n, args.browser_n, views, args.work, args.switches)),
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
