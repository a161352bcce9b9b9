"""What each attention view shows at a step: slices of a Trace, labelled, then drawn by `figures`.
Pure (no Streamlit), so the shapes the page draws are tested directly.

At step s (s = 1..m rows revealed) the page shows decoder rows 0..s-1. Their keys: in the generate modes
only positions 0..s-1 existed when those rows were computed (row t had t+1 keys), so the decoder
self-attention is s x s; in teacher forcing the whole reference is in the input, so it is s x m, and the
mask (hatched) shows which of those keys each row could not see.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from attention_lens.app.render import figures

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

KINDS = {"cross_attention": "Cross-attention", "decoder_self_attention": "Decoder self-attention",
         "encoder_self_attention": "Encoder self-attention"}
VIEWS = {"grid": "All layers × heads", "layer": "One layer's heads", "head": "One head", "mean": "Mean over heads"}


@dataclass(frozen=True)
class Slice:
    weights: np.ndarray  # (L, h, q, k)
    q_labels: list[str]
    k_labels: list[str]
    mask: np.ndarray | None  # (q, k) bool, True = allowed; None when nothing is masked


def at_step(trace: Trace, kind: str, step: int) -> Slice:
    """The weights of one kind that exist once `step` decoder rows have been computed."""
    if kind not in KINDS:
        raise ValueError(f"unknown attention kind {kind!r}")
    if not 1 <= step <= trace.m:
        raise ValueError(f"step must be in 1..{trace.m}, got {step}")
    w = getattr(trace, kind)
    if kind == "encoder_self_attention":
        lab = figures.labels(trace.source_tokens)
        return Slice(w, lab, lab, None)
    w = w[:, :, :step]
    q_lab = figures.row_labels(trace.decoder_input_tokens[:step], trace.target_tokens[:step])
    if kind == "cross_attention":
        return Slice(w, q_lab, figures.labels(trace.source_tokens), None)
    keys = trace.m if trace.options.mode == "teacher_forced" else step
    mask = trace.decoder_mask()[:step, :keys]
    return Slice(w[..., :keys], q_lab, figures.labels(trace.decoder_input_tokens[:keys]),
                 None if mask.all() else mask)


def attention_figure(trace: Trace, kind: str, view: str, step: int, layer: int = 0, head: int = 0,
                     scale: str = "fixed") -> go.Figure:
    """view: "grid" (every layer x head), "layer" (the heads of `layer`, one row), "head" (one, large) or "mean"
    (over heads, one per layer).
    scale: "fixed" (0-1) or "stretch" (0 to the largest weight shown)."""
    s = at_step(trace, kind, step)
    w = s.weights
    if view == "head":
        w = w[layer, head]
    elif view == "mean":
        w = w.mean(axis=1)[None]  # (1, L, q, k): one row, a column per layer
    elif view == "layer":
        w = w[layer][None]  # (1, h, q, k): one row, a column per head
    elif view != "grid":
        raise ValueError(f"unknown view {view!r}")
    row = None if kind == "encoder_self_attention" else step - 1  # outline the row this step computed
    zmax = 1.0
    if scale == "stretch":
        shown = w if s.mask is None else w[..., s.mask]
        zmax = float(max(shown.max(initial=0.0), 1e-6))
    if view == "head":
        return figures.heatmap(w, s.q_labels, s.k_labels, mask=s.mask, zmax=zmax,
                               title=f"{KINDS[kind]} · layer {layer + 1} · head {head + 1}", highlight_row=row)
    if view == "mean":
        # panels named by layer only ("mean over heads · layer 1" ran into its neighbours on narrow panels)
        return figures.grid(w, s.q_labels, s.k_labels, mask=s.mask, zmax=zmax, row_names=[""],
                            col_names=[f"layer {i + 1} (mean of heads)" if w.shape[1] == 1 else f"layer {i + 1}"
                                       for i in range(w.shape[1])], highlight_row=row)
    if view == "layer":
        return figures.grid(w, s.q_labels, s.k_labels, mask=s.mask, zmax=zmax, row_names=[f"layer {layer + 1}"],
                            highlight_row=row)
    return figures.grid(w, s.q_labels, s.k_labels, mask=s.mask, zmax=zmax, highlight_row=row)
