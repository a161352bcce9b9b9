"""The DTW view of one clip: the head set's averaged (normalised, median-filtered) cross-attention, token rows
over time, with the warping path drawn on it; under it the clip's log-mel spectrogram with the gold word
boundaries (green, solid) and the model's (orange, dashed) on the same time axis. Arrays in, a plotly figure
out; no Streamlit here."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

GOLD, MODEL, PATH = "#2ca02c", "#ff7f0e", "#ffffff"


def dtw_figure(matrix: np.ndarray, path_rows: np.ndarray, path_cols: np.ndarray, tokens: Sequence[str],
               mel: np.ndarray, mel_hop_s: float, frame_s: float,
               gold: Sequence[tuple[str, float, float]], model: Sequence[tuple[str, float, float]],
               height: int = 560) -> go.Figure:
    """matrix: (R, F) the averaged rows of the transcript's tokens over the clip's F frames (what DTW runs on);
    path_rows / path_cols: the warping path's cells; tokens: the R row labels; mel: (n_mels, frames) log-mel;
    gold / model: (word, start s, end s) of each word."""
    rows, frames = matrix.shape
    if len(tokens) != rows:
        raise ValueError(f"{len(tokens)} token labels for {rows} rows")
    t_frames = (np.arange(frames) + 0.5) * frame_s
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.58, 0.42],
                        subplot_titles=("Cross-attention of the head set (normalised, median-filtered, averaged) "
                                        "and the DTW path", "Log-mel spectrogram: gold word starts (green) and the "
                                                            "model's (orange, dashed)"))
    fig.add_trace(go.Heatmap(z=matrix, x=t_frames, y=list(range(rows)), colorscale="Viridis", showscale=False,
                             hovertemplate="%{x:.2f} s · row %{y}<br>%{z:.2f}<extra></extra>"), row=1, col=1)
    fig.add_trace(go.Scatter(x=(np.asarray(path_cols) + 0.5) * frame_s, y=np.asarray(path_rows), mode="lines",
                             line=dict(color=PATH, width=2), name="DTW path", hoverinfo="skip"), row=1, col=1)
    t_mel = (np.arange(mel.shape[1]) + 0.5) * mel_hop_s
    fig.add_trace(go.Heatmap(z=mel, x=t_mel, y=list(range(mel.shape[0])), colorscale="Magma", showscale=False,
                             hovertemplate="%{x:.2f} s · mel %{y}<extra></extra>"), row=2, col=1)
    top = mel.shape[0] - 1
    for words, colour, dash, y in ((gold, GOLD, "solid", top * 0.93), (model, MODEL, "dash", top * 0.07)):
        for word, start, _end in words:
            fig.add_shape(type="line", x0=start, x1=start, y0=0, y1=top, xref="x2", yref="y2",
                          line=dict(color=colour, width=2, dash=dash))
            fig.add_annotation(x=start, y=y, xref="x2", yref="y2", text=word, showarrow=False, xanchor="left",
                               font=dict(color=colour, size=12), bgcolor="rgba(0,0,0,0.55)")
    fig.update_yaxes(tickmode="array", tickvals=list(range(rows)), ticktext=list(tokens), autorange="reversed",
                     row=1, col=1)
    fig.update_yaxes(title_text="mel bin", row=2, col=1)
    fig.update_xaxes(title_text="time (s)", row=2, col=1)
    fig.update_yaxes(automargin=True, showticklabels=True)
    fig.update_xaxes(automargin=True, showticklabels=True, row=2, col=1)
    fig.update_xaxes(showticklabels=False, row=1, col=1)
    fig.update_layout(height=height, margin=dict(l=80, r=10, t=40, b=50), showlegend=False,
                      font=dict(size=12, color="#31333f"), plot_bgcolor="white", paper_bgcolor="white")
    return fig
