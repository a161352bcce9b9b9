"""Figures of training against inference (model/analysis/exposure.py): arrays in, plotly out, no Streamlit."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures

TF_COLOR, FREE_COLOR = "#1c7ed6", "#d9480f"


def probability_lines(reference: Sequence[str], p_tf: np.ndarray, p_free: np.ndarray,
                      first_difference: int | None) -> go.Figure:
    """Per step, the probability of the reference token under teacher forcing and under free running, on a log
    axis, with the step where the prefixes part marked."""
    p_tf, p_free = np.asarray(p_tf, dtype=np.float64), np.asarray(p_free, dtype=np.float64)
    if p_tf.shape != (len(reference),) or len(p_free) > len(p_tf):
        raise ValueError("one teacher-forced probability per reference token, and no more free-running ones")
    x = [f"{i + 1} {figures.escape(tok)}" for i, tok in enumerate(reference)]
    fig = go.Figure([
        go.Scatter(x=x, y=p_tf, name="teacher forcing (reads the reference)", mode="lines+markers",
                   line=dict(color=TF_COLOR, width=3), hovertemplate="%{x}<br>p = %{y:.4f}<extra></extra>"),
        go.Scatter(x=x[: len(p_free)], y=p_free, name="free running (reads its own choices)", mode="lines+markers",
                   line=dict(color=FREE_COLOR, width=2, dash="dot"),
                   hovertemplate="%{x}<br>p = %{y:.4f}<extra></extra>")])
    if first_difference is not None and first_difference < len(x):
        fig.add_vline(x=first_difference, line=dict(color="#495057", dash="dash"))
        # Named in the legend (a label over the plot's top edge would sit on the legend's row).
        fig.add_trace(go.Scatter(x=[None], y=[None], mode="lines", line=dict(color="#495057", dash="dash"),
                                 name=f"the prefixes part (step {first_difference + 1})", hoverinfo="skip"))
    fig.update_layout(title=dict(text="Probability of the reference token at each step", x=0.01, font=dict(size=14)),
                      font=figures.FONT, height=330, margin=dict(l=10, r=10, t=60, b=10), plot_bgcolor="#ffffff",
                      legend=dict(orientation="h", y=1.0, x=1, xanchor="right", yanchor="bottom"),
                      yaxis=dict(type="log", title=dict(text="p (log scale)", font=dict(size=12)),
                                 gridcolor="#e9ecef"),
                      xaxis=dict(type="category", tickangle=-45))
    return fig
