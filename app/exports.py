"""Exports of one decoding run: pictures (PNG / SVG via kaleido), an offline HTML report, a long-format CSV,
and the Trace itself as JSON or NPZ. Every function returns bytes; nothing here calls Streamlit."""

from __future__ import annotations

import html
import io
import json
import re
import shutil
import threading
import unicodedata
import warnings
from functools import cache
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
from attention_lens.app.render import figures, views
from attention_lens.app.services import CODE_OF, KINDS

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

CSV_COLUMNS = ["kind", "reading", "layer", "head", "query_index", "query_token", "key_index", "key_token", "weight",
               "allowed"]
# What an export's numbers are: the attention weights themselves, or a reading computed from them (Explore's
# Reading switch: app/screens/explore/analysis.py); said in file names, titles, the CSV and the HTML report.
READING_NAMES = {"weights": "raw", "norm_weighted": "norm-weighted", "rollout": "rollout"}
VIEW_NAMES = {"grid": "all layers × heads", "mean": "mean over heads"}


class ImageExportUnavailable(RuntimeError):
    """Kaleido found no Chrome/Chromium to render with: PNG/SVG cannot be made on this server."""


@cache
def image_export_available() -> bool:
    """Kaleido 1.x renders through a Chrome-family browser; it looks in the usual places and BROWSER_PATH."""
    try:
        from choreographer.browsers.chromium import Chromium

        return Chromium.find_browser(skip_local=False) is not None
    except Exception:  # any failure to locate a browser means "unavailable", not a crash
        return any(shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome", "chrome"))


_KALEIDO = threading.Lock()


@cache
def _kaleido_server() -> None:
    """Kaleido's one browser for this server process, started by the first export and kept open (kaleido >= 1.1;
    pio.to_image uses it while it runs). Without it every export starts and quits its own Chromium: 4.7-4.9 s
    each, against well under a second once it runs (benchmarks/RESULTS.md, part 7)."""
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    # plotly passes its request headers as kopts on every call, which a running server cannot take (and needs not)
    warnings.filterwarnings("ignore", "The kopts argument is ignored if using a server", UserWarning)


def slug(text: str, limit: int = 40) -> str:
    """`Der Hund, den die Katze jagte, bellte.` -> `der-hund-den-die-katze-jagte-bellte`: ASCII letters and
    digits joined by `-`, at most `limit` characters, whole words (`run` when nothing is left)."""
    ascii_text = unicodedata.normalize("NFKD", text.replace("ß", "ss")).encode("ascii", "ignore").decode()
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    out = ""
    for word in words:
        if len(out) + len(word) + (1 if out else 0) > limit:
            break
        out = f"{out}-{word}" if out else word
    return out or (words[0][:limit] if words else "run")


def file_stem(model_key: str, trace: Trace, step: int, kind: str | None = None, reading: str = "weights") -> str:
    """An export's file name without its extension: model, mode, the sentence's slug, the step, for a picture
    its kind, and a reading other than the raw weights (`en-fr-greedy-the-cat-sat-step3-cross-rollout`). Every
    part is safe in a file name."""
    model = slug(model_key.replace("/", "-").replace(".", "-"), 60)
    parts = [model, trace.options.mode.replace("_", "-"),
             slug(trace.normalised_source), f"step{step}"]
    if kind is not None:
        parts.append(CODE_OF[kind])
    if reading != "weights":
        parts.append(READING_NAMES[reading])
    return "-".join(parts)


def image_title(model_key: str, kind: str, view: str, layer: int, head: int, step: int,
                reading: str = "weights") -> str:
    """The title a picture carries out of the app: model, kind, layer and head (1-based, as on the page) or
    the view, the step and the reading (raw weights, norm-weighted or rollout)."""
    which = (f"layer {layer + 1} · head {head + 1}" if view == "head" else f"layer {layer + 1} · every head"
             if view == "layer" else VIEW_NAMES.get(view, view))
    what = "raw weights" if reading == "weights" else f"{READING_NAMES[reading]} reading"
    return f"{model_key} · {views.KINDS[kind]} · {which} · step {step} · {what}"


def image(fig: go.Figure, fmt: str, scale: float = 2.0, title: str = "") -> bytes:
    """PNG or SVG bytes of a figure, with `title` written above it (the figure on the page is not changed).
    Raises ImageExportUnavailable with a plain message if no browser."""
    if fmt not in ("png", "svg"):
        raise ValueError(f"image format must be png or svg, got {fmt!r}")
    if not image_export_available():  # the sync server would wait forever on a browser that cannot start
        raise ImageExportUnavailable("PNG/SVG export needs Chrome or Chromium on the server")
    try:
        width = fig.layout.width or figures.WIDTH + 100
        if title:
            fig = go.Figure(fig)  # a copy
            top = (fig.layout.margin.t or 20) + 40
            fig.update_layout(title=dict(text=html.escape(title), x=0.01, y=1.0, yref="container", yanchor="top",
                                         pad=dict(t=12), font=dict(size=16)), margin=dict(t=top),
                              height=(fig.layout.height or 450) + 40)
        with _KALEIDO:  # the sync server answers calls in turn; two sessions at once could get each other's image
            _kaleido_server()
            return pio.to_image(fig, format=fmt, width=width, scale=scale if fmt == "png" else 1.0)
    except Exception as exc:  # kaleido raises several types when Chrome is missing or fails to start
        raise ImageExportUnavailable(f"PNG/SVG export needs Chrome or Chromium on the server ({exc})") from exc


def axes(trace: Trace, kind: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Query and key tokens of one kind of attention."""
    if kind == "encoder_self_attention":
        return trace.source_tokens, trace.source_tokens
    if kind == "decoder_self_attention":
        return trace.decoder_input_tokens, trace.decoder_input_tokens
    if kind == "cross_attention":
        return trace.decoder_input_tokens, trace.source_tokens
    raise ValueError(f"unknown attention kind {kind!r}")


def allowed(trace: Trace, kind: str) -> np.ndarray:
    """(q, k) bool: where the run's mask let a query attend a key."""
    if kind == "decoder_self_attention":
        return trace.decoder_mask()
    q, k = getattr(trace, kind).shape[2:]
    return np.ones((q, k), dtype=bool)


def long_frame(trace: Trace, reading: str = "weights") -> pd.DataFrame:
    """Every weight of every kind, layer and head, one row each (the 'long' or 'tidy' format). Layers and heads
    are numbered from 1, as the page numbers them (docs/formats.md); query and key indices are token positions, from
    0, as the axis labels show them."""
    frames = []
    for kind in KINDS:
        w = getattr(trace, kind)  # (L, h, q, k)
        n_l, n_h, n_q, n_k = w.shape
        q_tok, k_tok = axes(trace, kind)
        layer, head, qi, ki = np.meshgrid(np.arange(n_l), np.arange(n_h), np.arange(n_q), np.arange(n_k),
                                          indexing="ij")
        ok = np.broadcast_to(allowed(trace, kind), w.shape)
        frames.append(pd.DataFrame({
            "kind": kind, "reading": READING_NAMES[reading], "layer": layer.ravel() + 1, "head": head.ravel() + 1,
            "query_index": qi.ravel(),
            "query_token": np.asarray(q_tok, dtype=object)[qi.ravel()], "key_index": ki.ravel(),
            "key_token": np.asarray(k_tok, dtype=object)[ki.ravel()], "weight": w.ravel().astype(np.float64),
            "allowed": ok.ravel()}))
    return pd.concat(frames, ignore_index=True)[CSV_COLUMNS]


def csv_bytes(trace: Trace, reading: str = "weights") -> bytes:
    return long_frame(trace, reading).to_csv(index=False, float_format="%.6g").encode("utf-8")


SALIENCY_COLUMNS = ["step", "side", "position", "token", "integrated_gradients", "input_x_gradient"]


def saliency_frame(trace: Trace) -> pd.DataFrame:
    """A trace's gradient saliency (Trace.saliency, model.engine.saliency), one row per decoder step and
    attributed token: step from 1 as the page counts them; side "source" or "prefix" (the decoder inputs the step
    could see); position from 0. Raises ValueError for a trace decoded without saliency."""
    if trace.saliency is None:
        raise ValueError("this trace has no saliency: decode it with saliency on (trace --saliency)")
    rows = []
    for t, row in enumerate(trace.saliency["steps"]):
        for side, tokens in (("source", trace.source_tokens), ("prefix", trace.decoder_input_tokens)):
            ig, ixg = row[side], row[f"{side}_input_x_gradient"]
            rows += [(t + 1, side, i, tokens[i], ig[i], ixg[i]) for i in range(len(ig))]
    return pd.DataFrame(rows, columns=SALIENCY_COLUMNS)


def saliency_csv(trace: Trace) -> bytes:
    return saliency_frame(trace).to_csv(index=False, float_format="%.6g").encode("utf-8")


def json_bytes(trace: Trace) -> bytes:
    return trace.to_json().encode("utf-8")


def npz_bytes(trace: Trace) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **trace.to_npz_dict())
    return buf.getvalue()


def kind_figure(trace: Trace, kind: str) -> go.Figure:
    """All layers x heads of one kind, every decoder row (the last step's view)."""
    view = views.at_step(trace, kind, trace.m)
    return figures.grid(view.weights, view.q_labels, view.k_labels, mask=view.mask, title=views.KINDS[kind])


def html_report(trace: Trace, title: str = "Attention Lens report", reading: str = "weights",
                heads_off: tuple[str, ...] = ()) -> bytes:
    """A single HTML file with the whole run: inputs, the output step by step, and every attention map.
    plotly.js is inlined once, so the file opens offline (no CDN, no network). Its options say the reading its
    maps show and the heads switched off."""
    esc = html.escape
    opts = trace.to_dict()["options"]  # as the JSON export writes them
    rows = "".join(
        f"<tr><td>{t}</td><td><code>{esc(trace.decoder_input_tokens[t])}</code></td>"
        f"<td><code>{esc(s.token)}</code></td><td>{s.prob:.3f}</td>"
        f"<td>{esc(', '.join(f'{tok} {p:.2f}' for tok, p in s.top_k))}</td></tr>"
        for t, s in enumerate(trace.steps))
    shown = {k: v for k, v in opts.items() if k not in ("warnings", "normalised_source")}
    shown |= {"reading": READING_NAMES[reading], "heads_off": list(heads_off or trace.options.ablate)}
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<title>{esc(title)}</title><style>body{{font-family:Inter,'DejaVu Sans',Arial,sans-serif;"
        "margin:2rem auto;max-width:1200px;color:#1f2933}} code{{background:#eef2f6;padding:0 .25em;"
        "border-radius:3px}} table{{border-collapse:collapse}} td,th{{border-bottom:1px solid #d9e2ec;"
        "padding:.25rem .6rem;text-align:left}} .note{{color:#52606d}}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p><b>Model</b> {esc(json.dumps(trace.model))}</p>",
        f"<p><b>Source (normalised)</b> {esc(str(opts.get('normalised_source', '')))}</p>",
        "<p><b>Tokens fed</b> " + " ".join(f"<code>{esc(t)}</code>" for t in trace.source_tokens) + "</p>",
        f"<p><b>Options</b> <code>{esc(json.dumps(shown, ensure_ascii=False))}</code></p>",
        *(f"<p class='note'>⚠ {esc(w)}</p>" for w in opts.get("warnings", [])),
        "<h2>Steps</h2><table><tr><th>row</th><th>read</th><th>output</th><th>p</th><th>top-k</th></tr>",
        rows, "</table>",
        "<p class='note'>Grey hatched cells were masked (the query was not allowed to see that key); white cells "
        "were allowed but got (almost) no weight.</p>",
    ]
    for i, kind in enumerate(KINDS):
        fig = kind_figure(trace, kind)
        parts.append(pio.to_html(fig, full_html=False, include_plotlyjs=(i == 0), config={"displaylogo": False}))
    parts.append("</body></html>")
    return "".join(parts).encode("utf-8")
