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
    """Per step, the probability of the original token with every head on and with the heads switched off."""
    x = [f"{i + 1} {t}" for i, t in enumerate(tokens)]
    fig = go.Figure([go.Bar(x=x, y=before, name="all heads on", marker_color="#7b8794"),
                     go.Bar(x=x, y=after, name="heads switched off", marker_color="#d9480f")])
    fig.update_layout(barmode="group", height=260, margin=dict(l=4, r=4, t=28, b=4),
                      yaxis=dict(range=[0, 1], title="p(original token)"),
                      title=dict(text="Probability of each original token", font=dict(size=13)),
                      legend=dict(orientation="h", y=1.15, x=1, xanchor="right"))
    return fig


def loss_grid(increase: np.ndarray, title: str) -> go.Figure:
    """increase (layers, heads) -> a heatmap, layers and heads 1-based."""
    layers, heads = increase.shape
    fig = go.Figure(go.Heatmap(z=increase, x=[f"H{h + 1}" for h in range(heads)],
                               y=[f"L{la + 1}" for la in range(layers)], colorscale="Reds", zmin=0,
                               text=np.vectorize(lambda v: f"{v:+.3f}")(increase),
                               texttemplate="%{text}", colorbar=dict(title="loss +")))
    fig.update_layout(height=80 + 50 * layers, margin=dict(l=4, r=4, t=28, b=4), title=dict(text=title),
                      yaxis=dict(autorange="reversed"))
    return fig
