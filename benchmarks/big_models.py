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

Targets: step click <= 150 ms on the server, <= 1.5 s to render. Prints one JSON line per model, with
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
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urlsplit

from benchmarks.app_latency import SOURCE, next_clicks
from benchmarks.harness import (
    CHROMIUM,
    ROOT,
    ROW_SHOWN,
    SOURCE_SHOWN,
    WebsocketBytes,
    app_env,
    browser_page,
    served,
    time_next_clicks,
)

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
print(json.dumps({"load_s": round(seconds, 2), "peak_rss_mb": round(rss), "heads": engine.n_heads,
                  "layers": [engine.n_encoder_layers, engine.n_decoder_layers],
                  "parameters": engine.card.get("parameters"), "vocab": engine.card.get("vocab_size")}))
"""


def load_figures(folder: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", LOAD, str(folder)], capture_output=True, text=True, cwd=ROOT,
                         env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=600)
    if out.returncode:
        raise RuntimeError(out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


VIEWS = {"default": None, "grid": "grid"}  # row name: the view the link names (None: the page's own default)


def link(view: str | None) -> dict[str, str]:
    """The link's query: the benchmark sentence in cross-attention, and the view if one is named."""
    return {"text": SOURCE, "kind": "cross", **({"view": view} if view else {})}


def server_clicks(env: dict[str, str], n: int, view: str | None) -> tuple[list[float], str]:
    """Seconds per Next click under AppTest (no browser), and the view that was shown."""
    from streamlit.testing.v1 import AppTest

    os.environ.update(env)
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=120)
    at.query_params.update(link(view))
    at.run()
    return next_clicks(at, n), at.session_state["view_keep"]


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


def measure(folder: Path, server_n: int, browser_n: int) -> dict:
    env = app_env(LENS_HF_MODELS=str(folder), LENS_DEFAULT_MODEL=folder.name)
    result = {"model": folder.name, **load_figures(folder)}
    for name, view in VIEWS.items():
        server, shown = server_clicks(env, server_n, view)
        row = {"view": shown, "server_click_median_ms": round(1000 * statistics.median(server)),
               "server_n": len(server)}
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
    args = ap.parse_args(argv)
    from tests.fixtures import hf_big

    if args.quick:
        folders = [hf_big.build_marian_sized(Path(tempfile.mkdtemp()) / "opus-mt-dims-2k", vocab=2000,
                                             sentences=5000)]
        args.server_n, args.browser_n = 3, 0
    else:
        folders = [hf_big.cached("opus-mt-sized"), hf_big.cached("t5-small-sized")]
    for folder in folders:
        print(json.dumps(measure(folder, args.server_n, args.browser_n)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
