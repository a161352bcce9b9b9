"""Figures of the Compare page: one side's attention picture (one head, or a layer's mean over heads) and the
difference of the two on a diverging scale. Pure: arrays and tokens in, plotly figures out; no Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures, views

DIVERGING = "RdBu"  # red: more weight on side B, blue: more on side A; white: equal


def side_figure(trace, kind: str, step: int, layer: int, head: int | None, title: str) -> go.Figure:
    """One side's picture at step, as Explore labels it (views.at_step); head None: the layer's mean."""
    s = views.at_step(trace, kind, step)
    w = s.weights[layer - 1]
    w = w.mean(axis=0) if head is None else w[head - 1]
    row = None if kind == "encoder_self_attention" else step - 1
    return figures.heatmap(w, s.q_labels, s.k_labels, mask=s.mask, title=title, highlight_row=row)


def difference_figure(values: np.ndarray, q_labels: Sequence[str], k_labels: Sequence[str],
                      title: str) -> go.Figure:
    """values (q, k) = A - B over the matching rows and columns, on a symmetric diverging scale."""
    top = float(np.abs(values).max(initial=0.0)) or 1.0
    text = np.vectorize(lambda v: f"{v:+.2f}")(values) if values.size else values
    fig = go.Figure(go.Heatmap(z=values, x=list(k_labels), y=list(q_labels), colorscale=DIVERGING, zmid=0,
                               zmin=-top, zmax=top, text=text, texttemplate="%{text}" if values.size <= 400 else None,
                               colorbar=dict(title="A − B"),
                               hovertemplate="%{y} → %{x}: A − B = %{z:+.4f}<extra></extra>"))
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=15)), font=figures.FONT,
                      height=int(max(260, 120 + 28 * len(q_labels))), margin=dict(l=10, r=10, t=50, b=10),
                      xaxis=dict(type="category", tickangle=-45, automargin=True),
                      yaxis=dict(type="category", autorange="reversed", automargin=True))
    return fig
