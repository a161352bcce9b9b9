"""Figure builders: arrays and tokens in, plotly figures out. No Streamlit here (docs/conventions.md, rule 7).

Conventions for every attention heatmap: rows are queries (top to bottom in order), columns are keys, the
colour is the softmax weight on a fixed 0-1 scale unless `zmax` says otherwise, and a cell the mask
forbade is drawn grey with a hatch glyph, so it never looks like a weight that merely came out as zero.
Tokens are shown as the model read them (SentencePiece marks word starts with "▁"), prefixed with their
position so that repeated tokens stay distinct categories on plotly's axes.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from functools import cache

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

# White for zero weight, so that grey (masked) is never confused with "attended to nothing".
COLORSCALE = [[0.0, "#ffffff"], [0.15, "#dbe9f6"], [0.4, "#89bedc"], [0.7, "#2f7ebc"], [1.0, "#08306b"]]
MASK_COLOR = "#d5d5d5"
MASK_GLYPH = "╱"
ACCENT = "#d9480f"
WIDTH = 1100  # px the figures are laid out for (Streamlit's wide layout)
FONT = dict(family="Inter, 'DejaVu Sans', Arial, sans-serif", size=13, color="#1f2933")
# Above this many cells a grid draws each panel as a PNG image, not a heatmap: a 512-token source on a
# 6-layer x 8-head model is 12.6 million cells, ~130 MB of heatmap JSON per view, and a panel ~130 px wide
# cannot show one cell per pixel anyway (benchmarks/RESULTS.md). One head stays an exact heatmap.
IMAGE_CELLS = 500_000
COLORBAR_PX, COLORBAR_MAX_PX = 170, 300  # a grid's colour bar: never shorter (six tick labels apart), nor longer


def figure(data: list[dict], layout: dict) -> go.Figure:
    """A Figure made from trace and layout dicts as they are, without plotly's per-property validation
    (`_validate=False`, as plotly.io does for its own templates). Validating costs more than building: about
    half of a step click's server time went to it (benchmarks/RESULTS.md, part 7). tests/app/render/test_figures.py
    validates what every builder returns, so a misspelt property still fails a test."""
    return go.Figure({"data": data, "layout": {"template": _template(), **layout}}, _validate=False)


@cache
def _template() -> dict:
    """Plotly's default template with only the trace types drawn here. The whole one holds defaults for 24
    trace types that st.plotly_chart copies and walks on every call (to_dict), for nothing."""
    full = pio.templates[pio.templates.default].to_plotly_json()
    drawn = ("bar", "heatmap", "image")
    return {"layout": full["layout"], "data": {k: v for k, v in full["data"].items() if k in drawn}}


def escape(token: str) -> str:
    """Plotly reads a small HTML subset in text (`<s>` would strike through): show tokens literally."""
    return token.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def labels(tokens: Sequence[str]) -> list[str]:
    """Unique axis labels: `3 ▁chat`."""
    return [f"{i} {escape(t)}" for i, t in enumerate(tokens)]


def row_labels(read: Sequence[str], predicted: Sequence[str]) -> list[str]:
    """Decoder rows say what they read and what they predicted: `3 ▁chat → ▁noir`."""
    return [f"{i} {escape(r)} → {escape(p)}" for i, (r, p) in enumerate(zip(read, predicted))]


def _check(weights: np.ndarray, q_labels: Sequence[str], k_labels: Sequence[str], mask: np.ndarray | None) -> None:
    if weights.shape[-2:] != (len(q_labels), len(k_labels)):
        raise ValueError(f"weights have queries x keys {weights.shape[-2:]} but there are {len(q_labels)} "
                         f"query labels and {len(k_labels)} key labels")
    if mask is not None and mask.shape != weights.shape[-2:]:
        raise ValueError(f"mask shape {mask.shape} differs from the weights' queries x keys {weights.shape[-2:]}")


def _traces(w: np.ndarray, q_labels: list[str], k_labels: list[str], mask: np.ndarray | None, zmax: float,
            showscale: bool, coloraxis: str | None = None, axes: tuple[str, str] = ("x", "y")) -> list[dict]:
    """One head as trace dicts: the weight heatmap, plus (if any cell is masked) a grey hatched overlay of
    the masked cells."""
    z = w.astype(np.float32)  # the Trace's own precision; plotly sends it as 4-byte binary, half of float64
    if mask is not None:
        z = np.where(mask, z, np.nan)
    main = dict(type="heatmap", z=z, x=k_labels, y=q_labels, zmin=0.0, zmax=zmax, xgap=1, ygap=1,
                xaxis=axes[0], yaxis=axes[1], hovertemplate="query %{y}<br>key %{x}<br>weight %{z:.3f}<extra></extra>")
    if coloraxis:
        main["coloraxis"] = coloraxis
    else:
        main.update(colorscale=COLORSCALE, showscale=showscale,
                    colorbar=dict(title=dict(text="weight"), thickness=12, len=0.8))
    traces = [main]
    if mask is not None and not mask.all():
        traces.append(dict(
            type="heatmap", z=np.where(mask, np.nan, 1.0).astype(np.float32), x=k_labels, y=q_labels, zmin=0,
            zmax=1, xgap=1, ygap=1, xaxis=axes[0], yaxis=axes[1], showscale=False,
            colorscale=[[0, MASK_COLOR], [1, MASK_COLOR]],
            text=np.where(mask, "", MASK_GLYPH), texttemplate="%{text}", textfont=dict(color="#8a8a8a", size=10),
            hovertemplate="query %{y}<br>key %{x}<br>masked: this query may not see this key<extra></extra>"))
    return traces


def _rgb_at(f: np.ndarray) -> np.ndarray:
    """COLORSCALE's colours at positions f in [0, 1], linear between its stops: (len(f), 3) ints 0-255."""
    stops = np.array([s for s, _ in COLORSCALE])
    rgb = np.array([[int(c[i:i + 2], 16) for i in (1, 3, 5)] for _, c in COLORSCALE], dtype=float)
    return np.stack([np.interp(f, stops, rgb[:, j]) for j in range(3)], axis=1).round().astype(int)


def colour_at(v: float) -> str:
    """COLORSCALE's colour at v (clipped to 0-1) as `#rrggbb`: what a heatmap cell of weight v is drawn in."""
    return colours_at(np.array([float(v)]))[0]


def colours_at(v: np.ndarray) -> list[str]:
    """colour_at for many values at once (clipped to 0-1), in one pass over the scale: `#rrggbb` each."""
    rgb = _rgb_at(np.clip(np.asarray(v, dtype=float).ravel(), 0.0, 1.0))
    return [f"#{r:02x}{g:02x}{b:02x}" for r, g, b in rgb.tolist()]


def _palette() -> list[int]:
    """COLORSCALE as a 256-colour PNG palette: indices 0-254 for weights 0..zmax, 255 for masked cells."""
    table = _rgb_at(np.linspace(0.0, 1.0, 255))
    masked = [int(MASK_COLOR[i:i + 2], 16) for i in (1, 3, 5)]
    return [*table.ravel().tolist(), *masked]


def png_uri(w: np.ndarray, mask: np.ndarray | None, zmax: float) -> str:
    """One head (q, k) as an indexed-colour PNG data URI, one pixel a cell, in the heatmaps' colours; masked
    cells are MASK_COLOR (a hatch glyph cannot be drawn inside a cell smaller than a pixel)."""
    from PIL import Image  # Streamlit's own dependency; only large grids need it

    idx = np.clip(np.rint(np.asarray(w, dtype=np.float64) / zmax * 254), 0, 254).astype(np.uint8)
    if mask is not None:
        idx[~mask] = 255
    img = Image.fromarray(idx, mode="P")
    img.putpalette(_palette())
    buf = io.BytesIO()
    img.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _image_axes(q_labels: list[str], k_labels: list[str], panel_px: float) -> tuple[dict, dict]:
    """Numeric axes (pixel i = token i) for panels drawn as images, a labelled tick every ~20 px."""
    def ticks(lab: list[str], rng: list[float]) -> dict:
        step = max(1, -(-len(lab) // max(2, int(panel_px // 20))))
        vals = list(range(0, len(lab), step))
        return dict(type="linear", range=rng, tickmode="array", tickvals=vals, ticktext=[lab[i] for i in vals],
                    tickfont=dict(size=8), automargin=True, showgrid=False, zeroline=False)

    x = dict(**ticks(k_labels, [-0.5, len(k_labels) - 0.5]), tickangle=-55)
    return x, ticks(q_labels, [len(q_labels) - 0.5, -0.5])  # queries top to bottom


def _axis_style(cell_w: float, cell_h: float) -> tuple[dict, dict]:
    """Every token gets its tick label (dtick=1: plotly would otherwise thin crowded labels out), in a font
    that fits the cell."""
    x_font, y_font = int(min(12, max(8, cell_w * 0.75))), int(min(12, max(8, cell_h - 5)))
    # upright (-90): a label never runs into its neighbour, as 45-55 degree ones did once longer than a cell
    x = dict(type="category", dtick=1, tickangle=-90, automargin=True, tickfont=dict(size=x_font), showgrid=False)
    y = dict(type="category", dtick=1, autorange="reversed", automargin=True, tickfont=dict(size=y_font),
             showgrid=False)
    return x, y


def heatmap(weights: np.ndarray, q_labels: Sequence[str], k_labels: Sequence[str], mask: np.ndarray | None = None,
            title: str = "", zmax: float = 1.0, x_title: str = "key (attended to)",
            y_title: str = "query (attending)", highlight_row: int | None = None) -> go.Figure:
    """One attention matrix (q, k) as a heatmap; mask (q, k) bool is True where attending was allowed."""
    weights = np.asarray(weights)
    _check(weights, q_labels, k_labels, mask)
    q_labels, k_labels = list(q_labels), list(k_labels)
    cell = int(min(40, max(14, (WIDTH - 250) / max(len(k_labels), 1))))
    xa, ya = _axis_style(cell, cell)
    y_room = 40 + 0.55 * xa["tickfont"]["size"] * max((len(s) for s in k_labels), default=4)
    height = int(max(260, (50 if title else 20) + cell * len(q_labels) + y_room))
    return figure(_traces(weights, q_labels, k_labels, mask, zmax, showscale=True), dict(
        title=dict(text=title, x=0.01, font=dict(size=15)), font=FONT, height=height,
        margin=dict(l=10, r=10, t=50 if title else 20, b=10), plot_bgcolor="#ffffff",
        xaxis=dict(**xa, constrain="domain", title=dict(text=x_title, font=dict(size=12))),
        yaxis=dict(**ya, scaleanchor="x", constrain="domain",  # square cells
                   title=dict(text=y_title, font=dict(size=12))),
        **_row_outline(highlight_row, [("x", "y")])))


def _row_outline(row: int | None, axes: list[tuple[str, str]]) -> dict:
    """Layout shapes: an accent outline around one row (the step just computed) in every panel."""
    if row is None:
        return {}
    return {"shapes": [dict(type="rect", xref=f"{x} domain", yref=y, x0=0, x1=1, y0=row - 0.5, y1=row + 0.5,
                 line=dict(color=ACCENT, width=2), fillcolor="rgba(0,0,0,0)", layer="above") for x, y in axes]}


def _ref(axis: str, i: int) -> str:
    """Plotly's name for subplot i's axis: x, x2, x3, ..."""
    return axis if i == 1 else f"{axis}{i}"


def grid(weights: np.ndarray, q_labels: Sequence[str], k_labels: Sequence[str], mask: np.ndarray | None = None,
         zmax: float = 1.0, row_names: Sequence[str] | None = None, col_names: Sequence[str] | None = None,
         title: str = "", highlight_row: int | None = None) -> go.Figure:
    """Every layer x head: weights (L, h, q, k) -> an L-row, h-column grid sharing one colour scale.

    Tick labels appear only on the outer subplots (left column, bottom row); hover gives every cell's
    query, key and weight. Above IMAGE_CELLS cells each panel is a PNG image instead (weights quantised to
    255 levels of the same colour scale, square pixels, sparse tick labels; hover gives query and key).
    """
    weights = np.asarray(weights)
    if weights.ndim != 4:
        raise ValueError(f"grid needs (layers, heads, queries, keys), got shape {weights.shape}")
    _check(weights, q_labels, k_labels, mask)
    n_layers, n_heads = weights.shape[:2]
    n_q, n_k = len(q_labels), len(k_labels)
    row_names = list(row_names or [f"layer {i + 1}" for i in range(n_layers)])
    col_names = list(col_names or [f"head {j + 1}" for j in range(n_heads)])
    q_labels, k_labels = list(q_labels), list(k_labels)
    # Pixel budget: cells as wide as a ~1100 px page allows, rows at least tall enough for a label.
    cell_w = max(6, min(36, (WIDTH - 40 * n_heads) // max(n_heads * n_k, 1)))
    cell = max(cell_w, 17)
    gap_px, title_px = 34, 60 if title else 34
    xa, ya = _axis_style(cell_w, cell)
    as_image = weights.size > IMAGE_CELLS
    if as_image:  # square pixels across the page's width; cells may be smaller than a screen pixel
        cell = max(60 / n_q, (WIDTH - 40 * n_heads) / (n_heads * n_k))
        xa, ya = _image_axes(q_labels, k_labels, cell * min(n_q, n_k))
    y_room = 20 + 0.55 * xa["tickfont"]["size"] * max((len(s) for s in k_labels), default=4)  # rotated key labels below
    plot_h = cell * n_q * n_layers + gap_px * (n_layers - 1)
    # A short grid (one row of panels, step 1) keeps its cells at the top of an area tall enough for the colour
    # bar, which is sized in pixels: as a fraction of a 17 px plot it collapsed and its tick labels overlapped.
    area_h = max(plot_h, COLORBAR_PX)
    fit = plot_h / area_h
    height = int(area_h + title_px + y_room)
    h_gap = min(0.02, 0.8 / max(n_heads - 1, 1))
    v_gap = gap_px / area_h if n_layers > 1 else 0.0
    col_w = (1 - h_gap * (n_heads - 1)) / n_heads
    row_h = (fit - v_gap * (n_layers - 1)) / n_layers
    data, layout_axes, notes = [], {}, []
    # The subplots by hand (make_subplots + update_* costs ~100 ms a figure; a step click redraws it).
    for li in range(n_layers):
        for hi in range(n_heads):
            i = li * n_heads + hi + 1
            x, y = _ref("x", i), _ref("y", i)
            x0, top = hi * (col_w + h_gap), 1 - li * (row_h + v_gap)
            bottom_x, left_y = _ref("x", (n_layers - 1) * n_heads + hi + 1), _ref("y", li * n_heads + 1)
            # automargin only where labels are drawn: plotly.js measures every automargin axis on each redraw,
            # and the inner ones (no labels) cost ~20% of a step click's redraw for nothing.
            x_labels, y_labels = li == n_layers - 1, hi == 0
            layout_axes["xaxis" if i == 1 else f"xaxis{i}"] = dict(
                **{**xa, "automargin": x_labels}, domain=[max(0.0, x0), min(1.0, x0 + col_w)], anchor=y,
                showticklabels=x_labels, **({"matches": bottom_x} if x != bottom_x else {}))
            layout_axes["yaxis" if i == 1 else f"yaxis{i}"] = dict(
                **{**ya, "automargin": y_labels}, domain=[max(0.0, top - row_h), min(1.0, top)], anchor=x,
                showticklabels=y_labels, **({"matches": left_y} if y != left_y else {}))
            notes.append(dict(text=" · ".join(n for n in (row_names[li], col_names[hi]) if n), x=x0 + col_w / 2,
                              y=top, xref="paper",
                              yref="paper", xanchor="center", yanchor="bottom", showarrow=False,
                              font=dict(size=12, color="#52606d")))
            if as_image:
                data.append(dict(type="image", source=png_uri(weights[li, hi], mask, zmax), x0=0, dx=1, y0=0, dy=1,
                                 xaxis=x, yaxis=y, hovertemplate="query %{y} · key %{x}<br>choose One head to read "
                                                                 "each weight<extra></extra>"))
            else:
                data += _traces(weights[li, hi], q_labels, k_labels, mask, zmax, False, "coloraxis", (x, y))
    if as_image:  # images use no colour axis: one cell drawn off the axes' range keeps the colour bar
        data.append(dict(type="heatmap", z=[[0.0]], x=[-9], y=[-9], coloraxis="coloraxis", hoverinfo="skip"))
    layout = dict(
        **({"title": dict(text=title, x=0.01, font=dict(size=15))} if title else {}), font=FONT, plot_bgcolor="#ffffff",
        height=height, margin=dict(l=10, r=10, t=title_px, b=10), annotations=notes,
        **_row_outline(highlight_row, [(_ref("x", i), _ref("y", i)) for i in range(1, n_layers * n_heads + 1)]),
        coloraxis=dict(colorscale=COLORSCALE, cmin=0.0, cmax=zmax,
                       colorbar=dict(title=dict(text="weight"), thickness=12, lenmode="pixels",
                                     len=min(COLORBAR_MAX_PX, area_h), y=1.0, yanchor="top")),
        **layout_axes)
    return figure(data, layout)
