"""How many bytes reach the browser for one full trace, against a bertviz-style payload?

- in the page's figures (no browser): the plotly figure JSON the Explore page builds (`plotly.io.to_json`, what
  `st.plotly_chart` sends; grids above `figures.IMAGE_CELLS` cells are PNG panels) for the attention view on
  screen at the last step (every row revealed), for each kind in the default "all layers x heads" grid, and for
  one head; bertviz-style: every layer, head and kind as nested lists of float32 weights in one JSON document
  (what bertviz's `head_view` / `model_view` embed in the page), serialised here, not estimated. The trace is
  synthetic (softmax rows of random scores, causal decoder self-attention): payload size depends on the shapes
  and on how values serialise, not on what a trained model attends to.
- in Chromium (`browser_bytes`): websocket bytes from the Streamlit server for one view of a run. The app is
  served on a random-weight model whose positions are n, with the end token blocked, so a long source is
  truncated to n tokens and greedy decoding writes m = n rows. Playwright types the source, clicks "Run to end"
  (every row revealed, the all-layers x heads grid of cross-attention) and then switches to decoder
  self-attention; for each, the bytes of the frames received between the click and the chart drawn with its
  last row outlined, and the time that took. Explore's stepper (app/render/stepper) holds the whole run in the
  page, so "Run to end" is its Last button and receives nothing; the switch of kind is a script run that sends
  the packed run again.

    .venv/bin/python -m benchmarks.payload [--sizes 64 256 512]
    .venv/bin/python -m benchmarks.payload --quick      # 2 x 4 heads at n = 8, 16; the browser at n = 16

benchmarks/run_all.py writes part 5 of RESULTS.md with these functions.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import plotly.io as pio
import torch
from attention_lens.app.render import views
from attention_lens.model.builtin.checkpoint import load_checkpoint, save_checkpoint
from attention_lens.model.engine.options import DecodeOptions
from attention_lens.model.engine.trace import KINDS, Step, Trace

from harness.browser import ATTENTION, CHROMIUM, IDLE, browser_page
from harness.measure import WebsocketBytes
from harness.server import app_env, served


def synthetic_trace(n: int, m: int, layers: int = 6, heads: int = 8, seed: int = 0) -> Trace:
    """A greedy-mode Trace with n source and m target tokens; rows are softmaxes of peaked random scores."""
    rng = np.random.default_rng(seed)

    def rows(q: int, k: int, causal: bool = False) -> np.ndarray:
        s = rng.standard_normal((layers, heads, q, k)).astype(np.float32) * 3
        if causal:
            s = np.where(np.tril(np.ones((q, k), bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).astype(np.float32)

    src = tuple(f"▁w{i % 50}" for i in range(n - 1)) + ("</s>",)
    tgt = tuple(f"▁m{i % 50}" for i in range(m - 1)) + ("</s>",)
    steps = tuple(Step(t, 5, 0.5, ((t, 0.5), ("▁x", 0.2))) for t in tgt)
    return Trace(model={"name": "synthetic", "family": "builtin", "encoder_layers": layers,
                        "decoder_layers": layers, "heads": heads},
                 options=DecodeOptions(), source_tokens=src,
                 decoder_input_tokens=("<s>", *tgt[:-1]), target_tokens=tgt,
                 encoder_self_attention=rows(n, n), decoder_self_attention=rows(m, m, causal=True),
                 cross_attention=rows(m, n), steps=steps)


def bertviz_bytes(trace: Trace) -> int:
    """bertviz's payload: tokens plus every weight of every kind as nested float lists, JSON-encoded (float32
    values printed through Python floats, as `tensor.tolist()` then `json.dumps` does)."""
    doc = {"encoder_tokens": list(trace.source_tokens), "decoder_tokens": list(trace.decoder_input_tokens)}
    size = len(json.dumps(doc))
    for kind in KINDS:  # one kind at a time keeps memory to one nested list
        size += len(json.dumps({kind: getattr(trace, kind).tolist()}))
    return size


def figure_bytes(trace: Trace, kind: str, view: str) -> int:
    fig = views.attention_figure(trace, kind, view, trace.m)
    return len(pio.to_json(fig, validate=False))


def measure(sizes: tuple[int, ...], layers: int = 6, heads: int = 8) -> list[dict]:
    """One row per size: bertviz-style bytes, and ours for every kind in the grid and one-head views."""
    out = []
    for size in sizes:
        trace = synthetic_trace(size, size, layers, heads)
        row = {"n": size, "m": size, "cells": sum(getattr(trace, k).size for k in KINDS),
               "bertviz": bertviz_bytes(trace)}
        for kind in KINDS:
            row[f"grid:{kind}"] = figure_bytes(trace, kind, "grid")
            row[f"head:{kind}"] = figure_bytes(trace, kind, "head")
        out.append(row)
    return out


LONG_SOURCE = " ".join(["the black cat sat on the mat near the bank of the river ."] * 30)[:1990]

# Remember the chart before an action; afterwards it is drawn when it is new, its panels are there and its last
# row is outlined. Explore draws ECharts (app/render/echarts.py) and, for grids drawn as images, plotly: ECharts
# says what it drew in its description (aria label: "48 panels, each ... Last query: 511 ... Keys: 0 <s>, ...").
CHART = f".st-key-attention .js-plotly-plot, {ATTENTION}"
# Explore's stepper (app/render/stepper) says the same in its picture's aria label, and stamps each draw
# (data-drawn); its Last button steps in the page.
STEPPER = ".st-key-attention [data-testid=lens-stepper]"
LAST = f"{STEPPER} .lens-last, .st-key-end button"
MARK = """() => { const gd = document.querySelector('.st-key-attention .js-plotly-plot');
    const ec = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    const st = document.querySelector('.st-key-attention [data-testid=lens-stepper]');
    if (st) { window.lensBefore = st.dataset.drawn; return; }
    window.lensBefore = gd ? gd.data : ec ? ec.getAttribute('aria-label') + ec.innerHTML.length : null; }"""
GRID = """([panels]) => { const st = document.querySelector('.st-key-attention [data-testid=lens-stepper]');
    if (st) { const pic = st.querySelector('.lens-picture');
        return !!pic && (pic.getAttribute('aria-label') || '').includes(panels + ' panels'); }
    const gd = document.querySelector('.st-key-attention .js-plotly-plot');
    if (gd) return !!gd._fullLayout && gd.data.length >= panels;
    const ec = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    const said = ec ? ec.getAttribute('aria-label') || '' : '';
    return said.includes(panels + ' panels'); }"""
DRAWN = """([rows, panels, key0, key0text]) => {
    const st = document.querySelector('.st-key-attention [data-testid=lens-stepper]');
    if (st) { const pic = st.querySelector('.lens-picture'), said = pic && pic.getAttribute('aria-label') || '';
        if (st.dataset.drawn === window.lensBefore || st.dataset.step !== String(rows)) return false;
        return said.includes(panels + ' panels') && said.includes('Last query: ' + (rows - 1) + ' ')
            && (!key0text || said.includes('Keys: ' + key0text + ',')); }
    const ec = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    if (ec) { const said = ec.getAttribute('aria-label') || '';
        if (ec.getAttribute('aria-busy') !== 'false' || said + ec.innerHTML.length === window.lensBefore) return false;
        return said.includes(panels + ' panels') && said.includes('Last query: ' + (rows - 1) + ' ')
            && (!key0text || said.includes('Keys: ' + key0text + ',')); }
    const gd = document.querySelector('.st-key-attention .js-plotly-plot');
    if (!gd || !gd._fullLayout || gd.data === window.lensBefore) return false;
    if (!gd.layout.shapes || !gd.layout.shapes.length) return false;
    const first = gd.data[0].x ? gd.data[0].x[0] : gd.layout.xaxis.ticktext[0];
    if (key0 && first !== key0) return false;
    const images = gd.data.filter(t => t.type === 'image').length;
    const drawn = images ? gd.querySelectorAll('image').length >= images : true;
    return drawn && gd.data.length >= panels && Math.abs(gd.layout.shapes[0].y0 - (rows - 1.5)) < 1e-9; }"""


def blocked_eos_checkpoint(folder: Path, positions: int, **dims) -> Path:
    """A random checkpoint (tests/fixtures/checkpoints.py) with `positions` positions that never ends a sentence
    early."""
    from harness.models.tiny import build_tiny_checkpoint

    build_tiny_checkpoint(folder, max_positions=positions, **dims)
    ckpt = load_checkpoint(folder)
    with torch.no_grad():
        ckpt.model.generator.bias[ckpt.config.eos_id] = -1e9
        for layer in [*ckpt.model.encoder, *ckpt.model.decoder]:  # peaked, not uniform, attention: PNG panels
            for attn in (getattr(layer, "self_attn", None), getattr(layer, "cross_attn", None)):  # compress as a
                if attn is not None:  # trained model's would, not better
                    attn.w_q.weight.mul_(4.0)
                    attn.w_k.weight.mul_(4.0)
    save_checkpoint(folder, ckpt.model, ckpt.source_tokenizer, ckpt.target_tokenizer, ckpt.card)
    return folder


def browser_bytes(folder: Path, rows: int, panels: int, timeout_s: float = 600) -> dict:
    """Serve the app on `folder`, drive one run of `rows` decoder rows to its end; bytes and seconds per view."""
    from attention_lens.app.render import figures
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    ckpt = load_checkpoint(folder)
    bos = ckpt.target_tokenizer.piece(ckpt.config.bos_id)  # decoder self-attention's first key
    out: dict = {}
    meter = WebsocketBytes()
    with served(app_env(folder)) as (url, _), browser_page("about:blank") as page:
        meter.attach(page)
        page.goto(url)
        box = page.locator(".st-key-source input, .st-key-source textarea")
        box.wait_for(timeout=timeout_s * 1000)
        box.fill(LONG_SOURCE)
        box.press("Enter")
        page.locator(f"{LAST} >> visible=true").first.wait_for(timeout=timeout_s * 1000)
        page.locator(CHART).first.wait_for(timeout=timeout_s * 1000)
        # a long source (and a many-headed model) opens on one panel: switch to the grid once the page is idle
        # (a click during a rerun can land on a stale button and be lost), and wait until the grid is drawn
        for attempt in range(3):  # a click that still landed on a stale button is clicked again
            page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
            page.locator("[data-testid=lens-stepper] .lens-views button[data-value=grid]").click()
            try:
                page.wait_for_function(GRID, arg=[panels], timeout=timeout_s * 1000 / 3)
                break
            except PlaywrightTimeout:
                print(f"payload: the grid was not drawn after click {attempt + 1}", file=sys.stderr)
                if attempt == 2:
                    page.screenshot(path=str(Path(folder) / "grid_not_drawn.png"))
                    raise
        for view, key0, action in (
                ("cross_attention", "", lambda: page.locator(f"{LAST} >> visible=true").first.click()),
                ("decoder_self_attention", f"0 {bos}",
                 lambda: page.locator("[data-testid=lens-stepper] .lens-kinds "
                                      "button[data-value=decoder_self_attention]").click())):
            page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
            page.wait_for_timeout(500)
            page.evaluate(MARK)
            before, start = meter.total, time.perf_counter()
            action()
            page.wait_for_function(DRAWN, arg=[rows, panels, figures.escape(key0), key0],
                                   timeout=timeout_s * 1000)
            out[view] = {"bytes": meter.total - before, "seconds": time.perf_counter() - start}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[64, 256, 512], help="n = m of the synthetic traces")
    ap.add_argument("--layers", type=int, default=6)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--quick", action="store_true", help="2 x 4 heads at n = 8, 16: checks that it runs")
    args = ap.parse_args(argv)
    if args.quick:
        args.sizes, args.layers, args.heads = [8, 16], 2, 4
    out: dict = {"figures": measure(tuple(args.sizes), args.layers, args.heads)}
    if not args.no_browser and Path(CHROMIUM).exists():
        big = max(args.sizes)
        with tempfile.TemporaryDirectory() as tmp:
            dims = {} if args.quick else dict(d_model=512, n_heads=args.heads, n_encoder_layers=args.layers,
                                              n_decoder_layers=args.layers, d_ff=2048)
            folder = blocked_eos_checkpoint(Path(tmp) / f"random-{big}", big, **dims)
            out["browser"] = browser_bytes(folder, big, args.layers * args.heads, 120 if args.quick else 900)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
