"""Bytes sent to the browser for one full trace, against a bertviz-style payload.

- ours: the plotly figure JSON the Explore page hands to the browser (`plotly.io.to_json`, as
  `st.plotly_chart` does) for the attention view on screen, at the last step (every row revealed), for each
  kind in the default "all layers x heads" grid, and for one head;
- bertviz-style: every layer, head and kind as nested lists of float32 weights in one JSON document (what
  bertviz's `head_view` / `model_view` embed in the page), serialised here, not estimated.

The trace is synthetic (softmax rows of random scores, causal decoder self-attention): payload size depends on
the shapes and on how values serialise, not on what a trained model attends to. Run through run_all.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from app.render import views  # noqa: E402
from model.engine.trace import KINDS, Step, Trace  # noqa: E402


def synthetic_trace(n: int, m: int, layers: int = 6, heads: int = 8, seed: int = 0) -> Trace:
    """A greedy-mode Trace with n source and m target tokens; rows are softmaxes of peaked random scores."""
    rng = np.random.default_rng(seed)

    def rows(q: int, k: int, causal: bool = False) -> np.ndarray:
        s = rng.standard_normal((layers, heads, q, k)).astype(np.float32) * 3
        if causal:
            s = np.where(np.tril(np.ones((q, k), bool)), s, -np.inf)
        e = np.exp(s - s.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).astype(np.float32)

    src = tuple(f"▁w{i % 50}" for i in range(n - 1)) + ("</s>",)
    tgt = tuple(f"▁m{i % 50}" for i in range(m - 1)) + ("</s>",)
    steps = tuple(Step(t, 5, 0.5, ((t, 0.5), ("▁x", 0.2))) for t in tgt)
    return Trace(model={"name": "synthetic", "family": "builtin", "encoder_layers": layers,
                        "decoder_layers": layers, "heads": heads},
                 options={"mode": "greedy", "causal": True, "shift": True}, source_tokens=src,
                 decoder_input_tokens=("<s>", *tgt[:-1]), target_tokens=tgt,
                 encoder_self_attention=rows(n, n), decoder_self_attention=rows(m, m, causal=True),
                 cross_attention=rows(m, n), steps=steps)


def bertviz_bytes(trace: Trace) -> int:
    """bertviz's payload: tokens plus every weight of every kind as nested float lists, JSON-encoded (float32
    values printed through Python floats, as `tensor.tolist()` then `json.dumps` does)."""
    doc = {"encoder_tokens": list(trace.source_tokens), "decoder_tokens": list(trace.decoder_input_tokens)}
    size = len(json.dumps(doc))
    for kind in KINDS:  # one kind at a time keeps memory to one nested list
        size += len(json.dumps({kind: getattr(trace, kind).tolist()}))
    return size


def figure_bytes(trace: Trace, kind: str, view: str) -> int:
    fig = views.attention_figure(trace, kind, view, trace.m)
    return len(pio.to_json(fig, validate=False))


def measure(sizes: tuple[int, ...], layers: int = 6, heads: int = 8) -> list[dict]:
    """One row per size: bertviz-style bytes, and ours for every kind in the grid and one-head views."""
    out = []
    for size in sizes:
        trace = synthetic_trace(size, size, layers, heads)
        row = {"n": size, "m": size, "cells": sum(getattr(trace, k).size for k in KINDS),
               "bertviz": bertviz_bytes(trace)}
        for kind in KINDS:
            row[f"grid:{kind}"] = figure_bytes(trace, kind, "grid")
            row[f"head:{kind}"] = figure_bytes(trace, kind, "head")
        out.append(row)
    return out
