"""How much the heads agree with each other (the Alignment page without gold links): a square heatmap."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures


def agreement_figure(agreement: np.ndarray, labels: Sequence[str], title: str = "") -> go.Figure:
    """(heads, heads) agreement in [0, 1], 1 where two heads predict the same links; labels like `L1H2`."""
    fig = go.Figure(go.Heatmap(
        z=agreement, x=list(labels), y=list(labels), zmin=0, zmax=1, colorscale=figures.COLORSCALE, xgap=1, ygap=1,
        colorbar=dict(title=dict(text="agree"), thickness=12),
        hovertemplate="%{y} · %{x}<br>agreement %{z:.2f}<extra></extra>"))
    side = 160 + 22 * len(labels)
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=15)) if title else None, font=figures.FONT,
                      height=side, width=side + 80, margin=dict(l=60, r=10, t=50 if title else 20, b=50),
                      yaxis=dict(autorange="reversed", type="category"), xaxis=dict(type="category"),
                      plot_bgcolor="#ffffff")
    return fig
