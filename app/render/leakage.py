"""Figures of the Leakage lab: arrays in, plotly figures out, no Streamlit (docs/conventions.md, rule 7).

Colours follow `figures`: weights on the white-to-blue scale, leaks in the accent colour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures
from plotly.subplots import make_subplots

OK_COLOR = "#2b8a3e"
MODEL_COLORS = ("#1c7ed6", "#d9480f", "#7048e8", "#2b8a3e")


def head_heatmap(values: np.ndarray, title: str, zmax: float = 1.0, fmt: str = ".2f",
                 hover: str = "weight") -> go.Figure:
    """values (L, h) -> a layers x heads heatmap with each number written in its cell (NaN: blank)."""
    values = np.asarray(values, dtype=np.float64)
    if values.ndim != 2:
        raise ValueError(f"head_heatmap needs (layers, heads), got shape {values.shape}")
    n_layers, n_heads = values.shape
    text = [["" if np.isnan(v) else format(v, fmt) for v in row] for row in values]
    fig = go.Figure(go.Heatmap(
        z=values, x=[f"head {j + 1}" for j in range(n_heads)], y=[f"layer {i + 1}" for i in range(n_layers)],
        zmin=0.0, zmax=zmax, colorscale=figures.COLORSCALE, text=text, texttemplate="%{text}", xgap=2, ygap=2,
        colorbar=dict(thickness=10, len=0.9),
        hovertemplate=f"%{{y}} · %{{x}}<br>{hover} %{{z:.4f}}<extra></extra>"))
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=14)), font=figures.FONT,
                      height=110 + 46 * n_layers, margin=dict(l=10, r=10, t=44, b=10), plot_bgcolor="#ffffff",
                      yaxis=dict(type="category", autorange="reversed"), xaxis=dict(type="category", side="bottom"))
    return fig


def row_bars(row_labels: Sequence[str], future: np.ndarray, own_answer: np.ndarray | None = None,
             title: str = "") -> go.Figure:
    """Per decoder row: the weight on later positions (and, with the shift off, on its own position when
    that position holds the answer). future, own_answer: (m,)."""
    future = np.asarray(future, dtype=np.float64)
    if future.shape != (len(row_labels),):
        raise ValueError(f"{future.shape[0] if future.ndim else 0} values for {len(row_labels)} rows")
    bars = [go.Bar(x=list(row_labels), y=future, name="on later positions", marker_color=figures.ACCENT,
                   hovertemplate="%{x}<br>future weight %{y:.3f}<extra></extra>")]
    if own_answer is not None:
        own_answer = np.asarray(own_answer, dtype=np.float64)
        if own_answer.shape != future.shape:
            raise ValueError("own_answer and future must have one value per row")
        bars.append(go.Bar(x=list(row_labels), y=own_answer, name="on its own position (holds the answer)",
                           marker_color="#7048e8",
                           hovertemplate="%{x}<br>own-answer weight %{y:.3f}<extra></extra>"))
    fig = go.Figure(bars)
    # The title on the figure's top line, the legend on its own line under it, left-aligned above the plot (on
    # the title's line, right-aligned, the two overlapped in the page's column).
    top = (34 if title else 0) + (30 if own_answer is not None else 0) + 12
    fig.update_layout(title=dict(text=title, x=0.01, y=1.0, yref="container", yanchor="top", pad=dict(t=10),
                                 font=dict(size=14)) if title else None, font=figures.FONT,
                      barmode="group", height=340 + top - 44, margin=dict(l=10, r=10, t=top, b=10),
                      yaxis=dict(range=[0, 1.05], title="attention weight", gridcolor="#eef2f6"),
                      xaxis=dict(type="category", tickangle=-45), plot_bgcolor="#ffffff",
                      showlegend=own_answer is not None,
                      legend=dict(orientation="h", y=1.0, x=0, xanchor="left", yanchor="bottom"))
    if not future.any() and (own_answer is None or not own_answer.any()):  # every bar 0: say so, not an empty axis
        fig.add_annotation(text="Nothing leaks: no row puts any weight on a later position"
                                + ("" if own_answer is None else " or on its own answer"),
                           x=0.5, y=0.5, xref="paper", yref="paper", showarrow=False,
                           font=dict(size=14, color="#2b8a3e"), bgcolor="rgba(255,255,255,0.9)")
    return fig


def probe_bars(label_tokens: Sequence[str], changes: Sequence[float], threshold: float, title: str = "") -> go.Figure:
    """Bar j: the largest logit change at rows <= j when the labels from j on are replaced (log scale), with
    the leak threshold as a line. Zero changes are drawn at the floor of the axis."""
    changes = np.asarray(changes, dtype=np.float64)
    if changes.shape != (len(label_tokens),):
        raise ValueError(f"{changes.shape} changes for {len(label_tokens)} labels")
    floor = 1e-8  # exact zeros are drawn as a stub one decade above the axis floor, labelled "0"
    shown = np.maximum(changes, floor)
    colors = [figures.ACCENT if c > threshold else OK_COLOR for c in changes]
    fig = go.Figure(go.Bar(
        x=figures.labels(label_tokens), y=shown, marker_color=colors, customdata=changes,
        text=["0" if c == 0 else "" for c in changes], textposition="outside", cliponaxis=False,
        hovertemplate="replace labels from %{x} on<br>rows before it moved by %{customdata:.3g}<extra></extra>"))
    fig.add_hline(y=threshold, line=dict(color="#52606d", dash="dash", width=1))
    # The label in the right margin at the line's height: inside the plot it sat over the last bar (mask off)
    fig.add_annotation(text=f"leak<br>threshold<br>{threshold:g}", x=1, xref="paper", xanchor="left", xshift=6,
                       y=float(np.log10(threshold)), yref="y", yanchor="middle", showarrow=False, align="left",
                       font=dict(size=12, color="#52606d"))
    top = max(float(shown.max(initial=floor)), threshold) * 10
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=14)) if title else None, font=figures.FONT,
                      height=320, margin=dict(l=10, r=84, t=44 if title else 16, b=10), plot_bgcolor="#ffffff",
                      xaxis=dict(type="category", tickangle=-45, title="first replaced label"),
                      yaxis=dict(type="log", range=[np.log10(floor) - 1, np.log10(top)], gridcolor="#eef2f6",
                                 exponentformat="power", title="logit change"))
    return fig


def training_curves(logs: Mapping[str, Mapping[str, Sequence[float]]]) -> go.Figure:
    """logs: model name -> columns of its train_log.csv (step, train_loss, valid_tf_loss, valid_tf_accuracy,
    valid_exact_match). Left: losses; right: teacher-forced accuracy (solid) against free-running exact
    match (dotted), the gap that makes these bugs silent."""
    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.08,
                        subplot_titles=["loss (solid: train, dashed: validation, teacher forcing)",
                                        "teacher-forced accuracy (solid) vs free-running exact match (dotted)"])
    for i, (name, cols) in enumerate(logs.items()):
        color = MODEL_COLORS[i % len(MODEL_COLORS)]
        step = list(cols.get("step", []))
        for col, dash, row_col, show in (("train_loss", "solid", 1, True), ("valid_tf_loss", "dash", 1, False),
                                         ("valid_tf_accuracy", "solid", 2, False),
                                         ("valid_exact_match", "dot", 2, False)):
            ys = list(cols.get(col, []))
            if not ys:
                continue
            fig.add_trace(go.Scatter(x=step, y=ys, mode="lines+markers", name=name, legendgroup=name,
                                     showlegend=show, line=dict(color=color, dash=dash, width=2),
                                     marker=dict(size=5),
                                     hovertemplate=f"{name}<br>step %{{x}}<br>{col} %{{y:.4f}}<extra></extra>"),
                          row=1, col=row_col)
    fig.update_yaxes(rangemode="tozero", gridcolor="#eef2f6", row=1, col=1)
    fig.update_yaxes(range=[0, 1.02], tickformat=".0%", gridcolor="#eef2f6", row=1, col=2)
    fig.update_xaxes(title_text="training step", gridcolor="#eef2f6")
    fig.update_layout(font=figures.FONT, height=380, margin=dict(l=10, r=10, t=50, b=10), plot_bgcolor="#ffffff",
                      legend=dict(orientation="h", y=-0.22, x=0))
    fig.update_annotations(font=dict(size=12, color="#52606d"))
    return fig


def mark_own_answer(fig: go.Figure, rows: Sequence[int], panels: int) -> go.Figure:
    """Outline, in every panel of a decoder self-attention figure (its `panels` subplots: x, y, x2, y2, ...),
    the cell where row t attends to its own position, for each row t in `rows`: the rows whose input holds the
    very token they must predict (the right shift off). Weight there is the model reading its answer."""
    shapes = []
    for i in range(1, panels + 1):
        x, y = figures._ref("x", i), figures._ref("y", i)
        shapes += [dict(type="rect", xref=x, yref=y, x0=t - 0.5, x1=t + 0.5, y0=t - 0.5, y1=t + 0.5,
                        line=dict(color="#c92a2a", width=2.5), fillcolor="rgba(0,0,0,0)", layer="above")
                   for t in rows]
    fig.update_layout(shapes=[*(fig.layout.shapes or ()), *shapes])
    return fig
