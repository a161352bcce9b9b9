"""A figure built by `figures` (plotly) drawn as an Apache ECharts option, for the page.

Why: the browser's plotly chunk is 4.7 MB, and a fresh page spent about a second fetching, compiling and
running it before its first heatmap appeared; Streamlit's ECharts chunk is 1.2 MB (benchmarks/RESULTS.md,
part 9). The plotly figure stays the one description of the picture (tests read it; PNG/SVG/HTML exports
render it); this module reads it back and says the same thing to ECharts: the same cells, colour scale, masked
cells grey with the hatch glyph, the outlined row, panel titles, fonts and height. (The Alignment page's
drawings need no chart library at all: app/render/alignment_svg.py.)
No Streamlit here (docs/conventions.md, rule 7); app/screens/charts.py puts the option on the page.

`option` returns None for what it does not draw (panels drawn as images: grids above figures.IMAGE_CELLS) and for
figures above MAX_CELLS; the page keeps plotly for those, whose binary arrays are smaller than ECharts' JSON.
"""

from __future__ import annotations

import html
import math

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures

# px of the chart on a 1366 x 768 screen (Explore's left column): turns the label room into fractions of the
# chart's width, so wider screens give the labels more room than they need, never less
ASSUMED_WIDTH = 680
# Cells carry positions, not labels ([key, query, weight]: a third of the bytes, and of the server's time to
# write them); the tooltip names the positions, which start every axis label, and the hovered row and column
# light up with their full labels (axisPointer).
TOOLTIP_WEIGHT = "query {@[1]} · key {@[0]}<br>weight {@[2]}"
TOOLTIP_MASKED = "query {@[1]} · key {@[0]}<br>masked: this query may not see this key"
POINTER = dict(show=True, type="shadow", triggerTooltip=False, label=dict(show=True, fontSize=11))
# Above this many cells the page keeps plotly: ECharts takes cells as JSON lists (~14 bytes a cell, ~1 us each to
# build), plotly as float32 binary (~5 bytes): a 6 x 8-head grid over 64 tokens (196k cells) would be ~2.8 MB a
# step instead of ~1 MB. Every shipped model's grid is far below (12 panels x 30 x 30 = 10.8k).
MAX_CELLS = 50_000
SVG_CELLS = 20_000  # up to this many cells the chart is drawn as SVG (crisp, its text readable by tests and
# screen tools); above, on a canvas, which draws tens of thousands of cells faster
WIDER = (900, 1200)  # chart widths (px) from which key labels may grow again (a 1920 screen's chart: ~1100)
LINE = 1.25  # a label's height (its bounding box) in font sizes: labels closer than this overlap
# Row heights (px) of the picture: a cell as tall as it is wide on the assumed width, within these bounds; the
# chart's height follows the rows (HEIGHT_KEY), its width is the column's.
ROW_PX = {"single": (16, 64), "panels": (12, 40)}
# A picture of few rows (step 1: one) is no thin strip: its rows grow until each panel is FEW_ROWS_ASPECT of its
# width tall on a 1920 x 1080 screen, where the chart is WIDE_SCALE times as wide as on the assumed width (1128
# against 697 px in Chromium), within MIN_PANEL_PX..FEW_ROWS_MAX_PX (the one-head view's wide panel stops there).
MIN_PANEL_PX, FEW_ROWS_MAX_PX = 72, 160
FEW_ROWS_ASPECT, WIDE_SCALE = 0.45, 1.62
LABEL_PX = 120  # longest label drawn (px), cut with an ellipsis; the axis pointer shows it whole on hover
LEFT_SHARE = 0.24  # of the chart's width at most for the query labels
GAP_PX = 34  # between rows of panels: room for their titles
HEIGHT_KEY = "lensHeight"  # the chart's height (px) the option was laid out for; charts.draw takes it out
STOPS = 11  # colours sampled from figures.COLORSCALE for ECharts' evenly spaced visualMap colours


def fit(cell_px: float) -> int:
    """A key label's font size that keeps vertical labels apart: ~0.7 of a cell's width, at least 7 px."""
    return max(7, int(0.7 * cell_px))


def every(font: float, cell_px: float) -> int:
    """ECharts' axisLabel.interval that keeps labels of this font apart on cells this many px apart: 0 draws
    every label, 1 every other one... (a thinned axis still names every cell on hover: axisPointer)."""
    return max(0, math.ceil(LINE * font / max(cell_px, 0.1)) - 1)


def _axis_key(ref: str, axis: str) -> str:
    """Trace axis reference -> layout key: "x" -> "xaxis", "x3" -> "xaxis3"."""
    return f"{axis}axis{ref[1:]}"


def _text_px(labels: list[str], size: float) -> float:
    return 0.6 * size * max((len(s) for s in labels), default=4)


def _cells(z: np.ndarray, digits: int = 3) -> list[list]:
    """[[key position, query position, weight], ...] for every finite cell (masked cells are NaN; a model that
    wrote inf or NaN gets a blank cell, as plotly draws it, not a chart that fails to serialise)."""
    z = np.asarray(z, dtype=np.float64)
    rows, cols = np.nonzero(np.isfinite(z))
    values = np.round(z[rows, cols], digits).tolist()
    return [[c, r, v] for r, c, v in zip(rows.tolist(), cols.tolist(), values)]


def describe(title: str, n_panels: int, q_labels: list[str], k_labels: list[str]) -> str:
    """What the chart shows, for screen readers (ECharts' aria label; it would otherwise read out ten cells)."""
    what = html.unescape(title) if title else "Attention weights"
    panels = f"{n_panels} panels, each " if n_panels > 1 else ""
    return (f"{what}: {panels}{len(q_labels)} × {len(k_labels)} (queries × keys). Last query: {q_labels[-1]}. "
            f"Keys: {', '.join(k_labels)}.")


def option(fig: go.Figure, fit_labels: bool = True, width: float = ASSUMED_WIDTH) -> dict | None:
    """The ECharts option that draws `fig` (a figures.heatmap or figures.grid), or None if it holds a trace this
    module does not draw. The picture takes the chart's width (the column it sits in: `width` px on a 1366-wide
    screen); its rows are about as tall as its cells are wide, and the chart's height follows them (the option's
    HEIGHT_KEY). Labels never overlap: a font that fits the cells, and where even the smallest does not, every
    k-th label (the axis pointer names each cell on hover). fit_labels=False keeps the figure's own font sizes
    (presenter mode), thinning labels instead."""
    kinds = {t.type for t in fig.data}
    if kinds != {"heatmap"}:
        return None
    if sum(np.size(t.z) for t in fig.data if t.type == "heatmap" and t.text is None) > MAX_CELLS:
        return None
    layout = fig.layout.to_plotly_json()
    font = layout.get("font", {})
    family, base = font.get("family", "sans-serif"), font.get("size", 13)
    margin = layout.get("margin", {})
    top_px = float(margin.get("t", 20))
    title = (layout.get("title") or {}).get("text") or ""
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    weights = [t for t in heatmaps if t.text is None]  # the mask overlay is the trace that carries the glyphs
    panels = sorted({(t.xaxis or "x", t.yaxis or "y") for t in heatmaps}, key=lambda p: int(p[0][1:] or 1))
    index = {p: i for i, p in enumerate(panels)}
    axes = [(layout.get(_axis_key(x, "x"), {}), layout.get(_axis_key(y, "y"), {})) for x, y in panels]
    first = weights[0]
    k_labels = [html.unescape(s) for s in first.x]
    q_labels = [html.unescape(s) for s in first.y]
    x_size = max(ax.get("tickfont", {}).get("size", 12) for ax, _ in axes)
    y_size = max(ay.get("tickfont", {}).get("size", 12) for _, ay in axes)
    x_title = (axes[0][0].get("title") or {}).get("text")
    y_title = (axes[0][1].get("title") or {}).get("text")
    title_size = ((axes[0][0].get("title") or {}).get("font") or {}).get("size", 12)
    single = len(panels) == 1
    # Horizontal room: query labels (cut at LEFT_SHARE of the chart), their title, the colour bar; the panels
    # share the rest in proportion to their plotly domains, in % of the chart, so a wider screen widens them.
    label_px = min(LEFT_SHARE * width, 14 + _text_px(q_labels, y_size))
    left_px = label_px + (title_size + 16 if y_title else 0)
    right_px = 64  # the colour bar and its labels
    left_f, plot_w = left_px / width, 1 - (left_px + right_px) / width
    x_spans = [ax.get("domain", [0, 1]) for ax, _ in axes]
    panel_w = min((x1 - x0) * plot_w * width for x0, x1 in x_spans)  # px on the assumed width
    cell_w = panel_w / len(k_labels)
    lo, hi = ROW_PX["single" if single else "panels"]
    panel_floor = min(FEW_ROWS_MAX_PX, max(MIN_PANEL_PX, FEW_ROWS_ASPECT * WIDE_SCALE * panel_w))
    cell_h = max(min(max(cell_w, lo), hi), panel_floor / len(q_labels))  # few rows: grown to the panel's floor
    x_font = min(x_size, fit(cell_w)) if fit_labels else x_size
    y_font = min(y_size, max(7, int(0.8 * cell_h))) if fit_labels else y_size
    flat = _text_px(k_labels, x_font) <= 0.92 * cell_w  # short labels on wide cells read across
    x_every = 0 if flat else every(x_font, cell_w)
    y_every = every(y_font, cell_h)
    bottom_px = 16 + (LINE * x_font if flat else min(LABEL_PX, _text_px(k_labels, x_font))) + (
        title_size + 16 if x_title else 0)
    rows = sorted({tuple(ay.get("domain", [0, 1])) for _, ay in axes}, key=lambda d: -d[1])  # top row first
    panel_h = cell_h * len(q_labels)
    plot_h = len(rows) * panel_h + (len(rows) - 1) * GAP_PX
    height = int(top_px + plot_h + bottom_px + 10)

    def pct(f: float) -> str:
        return f"{100 * f:.3f}%"

    grids, x_axes, y_axes, series = [], [], [], []
    wider: list[list[tuple[int, int]]] = []  # per key axis, its label font and interval on each of the WIDER charts
    for i, (ax, ay) in enumerate(axes):
        x0, x1 = ax.get("domain", [0, 1])
        top = top_px + rows.index(tuple(ay.get("domain", [0, 1]))) * (panel_h + GAP_PX)
        grids.append(dict(left=pct(left_f + x0 * plot_w), width=pct((x1 - x0) * plot_w), top=top, height=panel_h))
        grown = []
        for w in WIDER:  # the same cells on a wider chart: larger labels, or fewer left out
            c = cell_w * (w - left_px - right_px) / (width - left_px - right_px)
            f = min(x_size, fit(c)) if fit_labels else x_size
            grown.append((f, 0 if flat else every(f, c)))
        wider.append(grown)
        x_axes.append(dict(
            type="category", data=k_labels, gridIndex=i, position="bottom", splitLine=dict(show=False),
            axisTick=dict(show=False), axisLine=dict(show=False), axisPointer=POINTER,
            axisLabel=dict(show=bool(ax.get("showticklabels", True)), interval=x_every, rotate=0 if flat else 90,
                           fontSize=x_font, color="#1f2933", fontFamily=family, width=LABEL_PX,
                           overflow="truncate", hideOverlap=True),
            **({"name": x_title, "nameLocation": "middle", "nameGap": bottom_px - title_size - 14,
                "nameTextStyle": dict(fontSize=title_size)} if x_title else {})))
        y_axes.append(dict(
            type="category", data=q_labels, gridIndex=i, inverse=True, splitLine=dict(show=False),
            axisTick=dict(show=False), axisLine=dict(show=False), axisPointer=POINTER,
            axisLabel=dict(show=bool(ay.get("showticklabels", True)), interval=y_every, width=label_px - 10,
                           overflow="truncate", fontSize=y_font, color="#1f2933", fontFamily=family,
                           hideOverlap=True),
            **({"name": y_title, "nameLocation": "middle", "nameGap": left_px - title_size - 14,
                "nameRotate": 90, "nameTextStyle": dict(fontSize=title_size)} if y_title else {})))
    weight_series = []
    for t in heatmaps:
        i = index[(t.xaxis or "x", t.yaxis or "y")]
        if t.text is None:
            weight_series.append(len(series))
            series.append(dict(type="heatmap", xAxisIndex=i, yAxisIndex=i, data=_cells(t.z),
                               itemStyle=dict(borderColor="#ffffff", borderWidth=1),
                               emphasis=dict(itemStyle=dict(borderColor="#1f2933", borderWidth=1)),
                               tooltip=dict(formatter=TOOLTIP_WEIGHT)))
        else:
            glyph = (t.textfont.size if t.textfont is not None else None) or 10
            series.append(dict(type="heatmap", xAxisIndex=i, yAxisIndex=i,
                               data=[[a, b, 1] for a, b, _ in _cells(t.z)],
                               itemStyle=dict(color=figures.MASK_COLOR, borderColor="#ffffff", borderWidth=1),
                               label=dict(show=True, formatter=figures.MASK_GLYPH, color="#8a8a8a", fontSize=glyph),
                               emphasis=dict(disabled=True), tooltip=dict(formatter=TOOLTIP_MASKED)))
    for shape in layout.get("shapes", []):  # the outlined row, in each panel: a closed line on hidden value axes
        panel = next((p for p in panels if p[1] == shape.get("yref")), None)
        if panel is None:
            continue
        i, n_x, n_y = index[panel], len(k_labels), len(q_labels)
        x_axes.append(dict(type="value", gridIndex=i, min=-0.5, max=n_x - 0.5, show=False))
        y_axes.append(dict(type="value", gridIndex=i, min=-0.5, max=n_y - 0.5, inverse=True, show=False))
        a, b, r0, r1 = -0.5, n_x - 0.5, shape["y0"], shape["y1"]
        series.append(dict(type="line", xAxisIndex=len(x_axes) - 1, yAxisIndex=len(y_axes) - 1, silent=True,
                           symbol="none", animation=False, tooltip=dict(show=False), z=5,
                           lineStyle=dict(color=shape["line"]["color"], width=shape["line"]["width"]),
                           data=[[a, r0], [b, r0], [b, r1], [a, r1], [a, r0]]))
    zmax = float(layout.get("coloraxis", {}).get("cmax") or first.zmax or 1.0)
    bar = layout.get("coloraxis", {}).get("colorbar") or (first.colorbar.to_plotly_json() if first.colorbar else {})
    bar_font = (bar.get("tickfont") or {}).get("size", 11)
    titles = []
    if title:
        titles.append(dict(text=html.unescape(title), left=pct(0.01), top=4,
                           textStyle=dict(fontSize=(layout.get("title", {}).get("font") or {}).get("size", base + 2),
                                          fontFamily=family, fontWeight="normal", color="#1f2933")))
    titles.append(dict(text="weight", right=8, top=top_px, textStyle=dict(  # the colour bar's title
        fontSize=bar_font + 1, fontWeight="normal", color="#1f2933", fontFamily=family)))
    for note in layout.get("annotations", []):  # panel names above each panel, cut to the panel's width
        size = (note.get("font") or {}).get("size", 12)
        span = next((x1 - x0 for x0, x1 in x_spans if x0 - 1e-9 <= note["x"] <= x1 + 1e-9), 1.0)
        titles.append(dict(text=html.unescape(note["text"]), left=pct(left_f + note["x"] * plot_w),
                           top=_note_top(note, rows, top_px, panel_h) - size - 8,
                           textAlign="center",
                           textStyle=dict(fontSize=size, fontWeight="normal", color="#52606d", fontFamily=family,
                                          width=max(20.0, span * plot_w * width - 8), overflow="truncate")))
    grown = [dict(query=dict(minWidth=w), option=dict(xAxis=[
        dict(axisLabel=dict(fontSize=sizes[k][0], interval=sizes[k][1])) for sizes in wider]
        + [{} for _ in x_axes[len(wider):]]))
        for k, w in enumerate(WIDER) if any(sizes[k] != (a["axisLabel"]["fontSize"], a["axisLabel"]["interval"])
                                            for sizes, a in zip(wider, x_axes))]
    return {
        HEIGHT_KEY: height,
        **dict(
            animation=False, textStyle=dict(fontFamily=family, fontSize=base), backgroundColor="#ffffff",
            title=titles, grid=grids, xAxis=x_axes, yAxis=y_axes, series=series,
            tooltip=dict(trigger="item", confine=True, textStyle=dict(fontSize=max(12, base - 1))),
            visualMap=dict(type="continuous", min=0.0, max=zmax, seriesIndex=weight_series, calculable=False,
                           precision=2, right=14, top=top_px + 22, itemWidth=12,
                           itemHeight=max(50.0, min(200.0, plot_h - 40)),
                           text=[f"{zmax:.2g}", "0"], textGap=6, textStyle=dict(fontSize=bar_font, color="#1f2933"),
                           inRange=dict(color=[figures.colour_at(v) for v in np.linspace(0, 1, STOPS)])),
            aria=dict(enabled=True, label=dict(description=describe(title, len(panels), q_labels, k_labels))),
            **({"media": grown} if grown else {}))}


def _note_top(note: dict, rows: list[tuple], top_px: float, panel_h: float) -> float:
    """The top (px) of the row of panels a plotly annotation (placed at its panel's top, in paper y) names."""
    i = min(range(len(rows)), key=lambda r: abs(rows[r][1] - note["y"]))
    return top_px + i * (panel_h + GAP_PX)


def renderer(opt: dict) -> str:
    """"svg" for a chart of up to SVG_CELLS cells, else "canvas"."""
    cells = sum(len(x["data"]) for x in opt["series"] if x["type"] == "heatmap")
    return "svg" if cells <= SVG_CELLS else "canvas"
