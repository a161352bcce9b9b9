"""Figures of "why this token" (which inputs and layers led the model to its choice): the logit lens of one step
as an HTML table, the gradient saliency of one step as a row of source (and prefix) cells, and its rank agreement
with every cross-attention head as a layers x heads grid. Pure: a Trace's lens / saliency objects in, HTML or
plotly figures out; no Streamlit here."""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render.bars import share
from attention_lens.app.render.figures import ACCENT, labels

DIVERGING = "RdBu"  # negative red, positive blue, zero white (plotly's RdBu runs red -> blue)
CSS = f"""
.lens-layers{{border-collapse:collapse;font-size:.86em;margin:.2em 0 .3em 0}}
.lens-layers th,.lens-layers td{{padding:.12em .45em;border-bottom:1px solid #e4e7eb;text-align:left;
  white-space:nowrap}}
.lens-layers td .tok{{font-family:'DejaVu Sans Mono',Menlo,monospace}}
.lens-layers td.chosen .tok{{color:{ACCENT};font-weight:700}}
.lens-layers td .p{{color:#52606d;font-variant-numeric:tabular-nums;margin-left:.3em}}
"""


def lens_html(lens: dict, t: int, chosen: str, escape: Callable[[str], str] = html.escape) -> str:
    """Row t of a lens object: one table row per decoder layer (last layer at the bottom, the model's own
    distribution), its top-k tokens with probabilities; the chosen token in the accent colour."""
    first = lens["first_top_layer"][t]
    out = [f"<style>{CSS}</style><table class='lens-layers' aria-label='Logit lens at row {t + 1}'>",
           "<tr><th>layer</th>" + "".join(f"<th>#{i + 1}</th>" for i in range(lens["k"])) + "<th>chosen</th></tr>"]
    for layer, row in enumerate(lens["top_k"][t]):
        cells = "".join(f"<td class='{'chosen' if e['token'] == chosen else ''}'><span class='tok'>"
                        f"{escape(e['token'])}</span><span class='p'>{share(e['prob'])}</span></td>" for e in row)
        rank, p = lens["chosen_rank"][t][layer], lens["chosen_prob"][t][layer]
        name = f"L{layer + 1}" + (" (output)" if layer == lens["layers"] - 1 else "")
        mark = " ★" if first is not None and layer + 1 == first else ""
        out.append(f"<tr><th>{name}{mark}</th>{cells}<td>rank {rank}, {share(p)}</td></tr>")
    out.append("</table>")
    return "".join(out)


def lens_summary(lens: dict, t: int, chosen: str) -> str:
    """One sentence: where the chosen token becomes (and stays) the top prediction."""
    first = lens["first_top_layer"][t]
    if first is None:
        return f"'{chosen}' is not the last layer's top prediction (it was sampled or forced)."
    return (f"'{chosen}' is the top prediction from layer {first} of {lens['layers']} on (★)."
            if first > 1 else f"'{chosen}' is already the top prediction after layer 1.")


def saliency_row(source_tokens: Sequence[str], prefix_tokens: Sequence[str], row: dict,
                 method: str = "source") -> go.Figure:
    """One step's attribution as one row of cells: the source tokens, then the target prefix (separated),
    coloured on a diverging scale symmetric around 0. method: "source" (integrated gradients) or
    "source_input_x_gradient"."""
    src = np.asarray(row[method], dtype=float)
    pre = np.asarray(row["prefix" if method == "source" else "prefix_input_x_gradient"], dtype=float)
    top = float(max(np.abs(src).max(initial=0), np.abs(pre).max(initial=0))) or 1.0
    x = [f"src {s}" for s in labels(source_tokens)] + [f"tgt {p}" for p in labels(prefix_tokens[:len(pre)])]
    z = np.concatenate([src, pre])[None, :]
    fig = go.Figure(go.Heatmap(z=z, x=x, y=["attribution"], colorscale=DIVERGING, zmid=0, zmin=-top, zmax=top,
                               text=np.vectorize(lambda v: f"{v:+.2f}")(z), texttemplate="%{text}",
                               colorbar=dict(thickness=10, len=1.2),
                               hovertemplate="%{x}: %{z:+.4f}<extra></extra>"))
    fig.add_vline(x=len(src) - 0.5, line_width=2, line_color="#1f2933")
    fig.update_layout(height=150, margin=dict(l=8, r=8, t=28, b=8),
                      title=dict(text="Gradient saliency of the chosen token: source | target prefix",
                                 font=dict(size=13)),
                      xaxis=dict(type="category", tickangle=-45, automargin=True), yaxis=dict(visible=False))
    return fig


def agreement_grid(spearman: list[list[float | None]]) -> go.Figure:
    """Per cross-attention head (layers x heads), Spearman's rho between its attention at the step and |IG| over
    the source: blue agrees with the gradient, red disagrees; a blank cell is undefined (a constant side)."""
    rho = np.array([[np.nan if v is None else v for v in layer] for layer in spearman], dtype=float)
    layers, heads = rho.shape
    text = np.vectorize(lambda v: "–" if np.isnan(v) else f"{v:+.2f}")(rho)
    fig = go.Figure(go.Heatmap(z=rho, x=[f"H{h + 1}" for h in range(heads)], y=[f"L{la + 1}" for la in range(layers)],
                               colorscale=DIVERGING, zmin=-1, zmax=1, zmid=0, text=text, texttemplate="%{text}",
                               colorbar=dict(title="ρ", thickness=10),
                               hovertemplate="cross %{y} %{x}: ρ = %{z:+.2f}<extra></extra>"))
    fig.update_layout(height=90 + 40 * layers, margin=dict(l=8, r=8, t=28, b=8),
                      title=dict(text="Rank agreement of each cross-attention head with |IG| over the source",
                                 font=dict(size=13)),
                      yaxis=dict(autorange="reversed", automargin=True), xaxis=dict(automargin=True))
    return fig
