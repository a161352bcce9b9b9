"""What the page really sends: websocket bytes from the Streamlit server to Chromium for one view of a run.

The app is served on a random-weight model (the operator folder of `LENS_MODEL_DIRS`) whose positions are
n, with the end token blocked, so a long source is truncated to n tokens and greedy decoding writes m = n rows.
Playwright types the source, clicks "Run to end" (every row revealed, the default all-layers x heads grid of
cross-attention) and then switches to decoder self-attention; for each, the bytes of the frames received
between the click and the chart drawn with its last row outlined, and the time that took.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from model.builtin.checkpoint import load_checkpoint, save_checkpoint  # noqa: E402
from tests.fixtures.browser import ATTENTION, CHROMIUM, IDLE, LAUNCH_ARGS, free_port, serve  # noqa: E402

LONG_SOURCE = " ".join(["the black cat sat on the mat near the bank of the river ."] * 30)[:1990]

# Remember the chart before an action; afterwards it is drawn when it is new, its panels are there and its last
# row is outlined. Explore draws ECharts (app/render/echarts.py) and, for grids drawn as images, plotly: ECharts
# says what it drew in its description (aria label: "48 panels, each ... Last query: 511 ... Keys: 0 <s>, ...").
CHART = f".st-key-attention .js-plotly-plot, {ATTENTION}"
MARK = """() => { const gd = document.querySelector('.st-key-attention .js-plotly-plot');
    const ec = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    window.lensBefore = gd ? gd.data : ec ? ec.getAttribute('aria-label') + ec.innerHTML.length : null; }"""
GRID = """([panels]) => { const gd = document.querySelector('.st-key-attention .js-plotly-plot');
    if (gd) return !!gd._fullLayout && gd.data.length >= panels;
    const ec = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    const said = ec ? ec.getAttribute('aria-label') || '' : '';
    return said.includes(panels + ' panels'); }"""
DRAWN = """([rows, panels, key0, key0text]) => {
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
    from tests.fixtures.checkpoints import build_tiny_checkpoint

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


def measure(folder: Path, rows: int, panels: int, timeout_s: float = 600) -> dict:
    """Serve the app on `folder`, drive one run of `rows` decoder rows to its end; bytes and seconds per view."""
    import os

    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    from app.render import figures

    ckpt = load_checkpoint(folder)
    bos = ckpt.target_tokenizer.piece(ckpt.config.bos_id)  # decoder self-attention's first key
    env = dict(os.environ, LENS_MODEL_DIRS=str(folder), LENS_DEFAULT_MODEL=str(folder))
    port = free_port()
    proc = serve(env, port)
    received = [0]
    out: dict = {}
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            page = browser.new_page(viewport={"width": 1500, "height": 1400})
            page.on("websocket", lambda ws: ws.on("framereceived", lambda data: received.__setitem__(
                0, received[0] + len(data if isinstance(data, bytes) else data.encode()))))
            page.goto(f"http://127.0.0.1:{port}")
            box = page.locator(".st-key-source input, .st-key-source textarea")
            box.wait_for(timeout=timeout_s * 1000)
            box.fill(LONG_SOURCE)
            box.press("Enter")
            page.locator(".st-key-end button").wait_for(timeout=timeout_s * 1000)
            page.locator(CHART).first.wait_for(timeout=timeout_s * 1000)
            # a long source (and a many-headed model) opens on one panel: switch to the grid once the page is idle
            # (a click during a rerun can land on a stale button and be lost), and wait until the grid is drawn
            for attempt in range(3):  # a click that still landed on a stale button is clicked again
                page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
                page.locator(".st-key-view").get_by_text("Grid", exact=True).click()
                try:
                    page.wait_for_function(GRID, arg=[panels], timeout=timeout_s * 1000 / 3)
                    break
                except PlaywrightTimeout:
                    print(f"browser_payload: the grid was not drawn after click {attempt + 1}", file=sys.stderr)
                    if attempt == 2:
                        page.screenshot(path=str(Path(folder) / "grid_not_drawn.png"))
                        raise
            for view, key0, action in (
                    ("cross_attention", "", lambda: page.locator(".st-key-end button").click()),
                    ("decoder_self_attention", f"0 {bos}",
                     lambda: page.locator(".st-key-kind").get_by_text("Decoder", exact=True).click())):
                page.locator(IDLE).wait_for(timeout=timeout_s * 1000)
                page.wait_for_timeout(500)
                page.evaluate(MARK)
                before, start = received[0], time.perf_counter()
                action()
                page.wait_for_function(DRAWN, arg=[rows, panels, figures.escape(key0), key0],
                                       timeout=timeout_s * 1000)
                out[view] = {"bytes": received[0] - before, "seconds": time.perf_counter() - start}
            browser.close()
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    return out
