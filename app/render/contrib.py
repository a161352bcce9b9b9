"""Figures of contributions and ablation: the source / prefix bar of one step, the per-step probabilities of
the original tokens with and without switched-off heads, and a kind's layers x heads grid of loss increases."""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

SOURCE_COLOUR, PREFIX_COLOUR = "#1f77b4", "#ff7f0e"


def share_bar(source_share: float, step: int) -> go.Figure:
    """One horizontal bar: the share of step's prediction from the source, the rest from the prefix."""
    fig = go.Figure([go.Bar(y=[""], x=[source_share], orientation="h", name="source", marker_color=SOURCE_COLOUR,
                            text=[f"source {source_share:.0%}"], textposition="inside"),
                     go.Bar(y=[""], x=[1 - source_share], orientation="h", name="target prefix",
                            marker_color=PREFIX_COLOUR, text=[f"prefix {1 - source_share:.0%}"],
                            textposition="inside")])
    fig.update_layout(barmode="stack", height=90, margin=dict(l=4, r=4, t=24, b=4), showlegend=False,
                      title=dict(text=f"Step {step}: where the prediction comes from", font=dict(size=13)),
                      xaxis=dict(range=[0, 1], tickformat=".0%"), yaxis=dict(visible=False))
    return fig


def ablation_probs(tokens: list[str], before: list[float], after: list[float]) -> go.Figure:
    """Per step, the probability of the original token with every head on and with the heads switched off.
    The x axis names each step's token (position first, so a repeated token stays its own category); the
    margins grow to hold the rotated token labels and the y axis title beside its tick labels (automargin)."""
    x = [f"{i + 1} {t.replace('▁', ' ').strip() or t}" for i, t in enumerate(tokens)]
    fig = go.Figure([go.Bar(x=x, y=before, name="all heads on", marker_color="#7b8794"),
                     go.Bar(x=x, y=after, name="heads switched off", marker_color="#d9480f")])
    fig.update_layout(barmode="group", height=300, margin=dict(l=64, r=8, t=36, b=72),
                      title=dict(text="Probability of each original token", font=dict(size=13)),
                      legend=dict(orientation="h", y=1.12, x=1, xanchor="right"))
    fig.update_xaxes(type="category", tickmode="array", tickvals=x, ticktext=x, tickangle=-45, automargin=True,
                     title=dict(text="step and its token", standoff=8))
    fig.update_yaxes(range=[0, 1], tickformat=".0%", automargin=True, title=dict(text="p(original token)",
                                                                                 standoff=10))
    return fig


def loss_grid(increase: np.ndarray, title: str) -> go.Figure:
    """increase (layers, heads) -> a heatmap, layers and heads 1-based."""
    layers, heads = increase.shape
    fig = go.Figure(go.Heatmap(z=increase, x=[f"H{h + 1}" for h in range(heads)],
                               y=[f"L{la + 1}" for la in range(layers)], colorscale="Reds", zmin=0,
                               text=np.vectorize(lambda v: f"{v:+.3f}")(increase),
                               texttemplate="%{text}", colorbar=dict(title="loss +")))
    fig.update_layout(height=110 + 50 * layers, margin=dict(l=8, r=8, t=32, b=8), title=dict(text=title),
                      xaxis=dict(title=dict(text="head"), side="bottom", automargin=True),
                      yaxis=dict(title=dict(text="layer"), autorange="reversed", automargin=True))
    return fig
