"""Figures of the Leakage lab's three bug switches: arrays in, plotly figures out, no Streamlit
(docs/conventions.md, rule 7)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures
from attention_lens.app.render.leakage import OK_COLOR

KIND_LABELS = {"encoder_self_attention": "encoder self", "decoder_self_attention": "decoder self",
               "cross_attention": "cross"}


def _layout(fig: go.Figure, title: str, height: int, y_title: str) -> go.Figure:
    fig.update_layout(title=dict(text=title, x=0.01, font=dict(size=14)), font=figures.FONT, height=height,
                      margin=dict(l=10, r=10, t=44, b=10), plot_bgcolor="#ffffff", barmode="group",
                      legend=dict(orientation="h", y=1.02, x=1, xanchor="right", yanchor="bottom"),
                      yaxis=dict(title=dict(text=y_title, font=dict(size=12)), gridcolor="#e9ecef"),
                      xaxis=dict(type="category", tickangle=-45))
    return fig


def row_sum_bars(row_labels: Sequence[str], lowest: np.ndarray, mean: np.ndarray, title: str) -> go.Figure:
    """Per decoder row: the smallest sum of any layer and head, and the mean sum, against the line at 1."""
    lowest, mean = np.asarray(lowest, dtype=np.float64), np.asarray(mean, dtype=np.float64)
    if lowest.shape != (len(row_labels),) or mean.shape != lowest.shape:
        raise ValueError(f"one value per row: {len(row_labels)} rows, shapes {lowest.shape} and {mean.shape}")
    labels = list(row_labels)
    fig = go.Figure([
        go.Bar(x=labels, y=lowest, name="smallest (any layer, head)", marker_color=figures.ACCENT,
               hovertemplate="%{x}<br>smallest row sum %{y:.3f}<extra></extra>"),
        go.Bar(x=labels, y=mean, name="mean over layers and heads", marker_color="#74a9cf",
               hovertemplate="%{x}<br>mean row sum %{y:.3f}<extra></extra>")])
    fig.add_hline(y=1.0, line=dict(color=OK_COLOR, dash="dash", width=2), annotation_text="a softmax row: 1",
                  annotation_position="top left")
    fig.update_yaxes(range=[0, 1.15])
    return _layout(fig, title, 320, "row sum")


def sharpness_bars(healthy: Mapping[str, float], bug: Mapping[str, float], title: str, y_title: str) -> go.Figure:
    """One value per attention kind for the healthy and the switched run, side by side."""
    if set(healthy) != set(bug):
        raise ValueError("the two runs must measure the same kinds")
    kinds = [k for k in KIND_LABELS if k in healthy]
    x = [KIND_LABELS[k] for k in kinds]
    fig = go.Figure([
        go.Bar(x=x, y=[healthy[k] for k in kinds], name="healthy (÷√d_k)", marker_color="#74a9cf",
               hovertemplate="%{x}<br>healthy %{y:.3f}<extra></extra>"),
        go.Bar(x=x, y=[bug[k] for k in kinds], name="no scaling", marker_color=figures.ACCENT,
               hovertemplate="%{x}<br>no scaling %{y:.3f}<extra></extra>")])
    return _layout(fig, title, 300, y_title)
