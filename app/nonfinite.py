"""Where a run stops being numbers: the first NaN or infinity in a Trace, in the order the model computes it
(encoder self-attention layer by layer; then each decoder layer's self-attention and cross-attention, and, with
the logit lens, that layer's output; then the next-token probabilities), said in one line for the page.

A diverged training run leaves weights that hold NaN or inf; everything computed after the first one is NaN too,
so the first place it shows is where to look. No Streamlit here."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from attention_lens.app.services import Trace

KIND_NAMES = {"encoder_self_attention": "encoder self-attention", "decoder_self_attention": "decoder self-attention",
              "cross_attention": "cross-attention"}


def _first_bad_row(w: np.ndarray) -> int | None:
    """(h, q, k) weights of one layer -> the first query row (0-based) holding a non-finite weight, or None."""
    bad = ~np.isfinite(np.asarray(w, dtype=np.float64)).all(axis=(0, 2))
    return int(np.argmax(bad)) if bad.any() else None


def _bad(values) -> bool:
    return any(v is None or not np.isfinite(float(v)) for v in values)


def first_nonfinite(trace: Trace) -> tuple[str, int, int | None] | None:
    """The first place the run holds NaN or inf: (what, layer (1-based, 0 for the output), step (1-based) or None
    for the encoder), where `what` is a kind of attention, "layer output" (the logit lens's reading of that
    decoder layer) or "probabilities"; None when every number is finite."""
    enc = np.asarray(trace.encoder_self_attention)
    for layer in range(enc.shape[0]):
        if _first_bad_row(enc[layer]) is not None:
            return "encoder_self_attention", layer + 1, None
    dec, cross = np.asarray(trace.decoder_self_attention), np.asarray(trace.cross_attention)
    chosen = (trace.lens or {}).get("chosen_prob")
    for layer in range(dec.shape[0]):
        found = []
        for kind, w in (("decoder_self_attention", dec), ("cross_attention", cross)):
            row = _first_bad_row(w[layer])
            if row is not None:
                found.append((row, kind))
        if found:
            row, kind = min(found)  # the earlier step; at the same step the self-attention comes first
            return kind, layer + 1, row + 1
        rows = [t for t, per_layer in enumerate(chosen or []) if _bad([per_layer[layer]])]
        # the lens reads a layer's output through the final norm and the output projection: its NaN is this
        # layer's own only where the next layer's attention (which reads that output) is NaN too, or it is the last
        nxt = layer + 1
        if rows and (nxt == dec.shape[0] or _first_bad_row(dec[nxt]) is not None
                     or _first_bad_row(cross[nxt]) is not None):
            return "layer output", layer + 1, rows[0] + 1
    for t, s in enumerate(trace.steps):
        if _bad([s.prob, *(p for _, p in s.top_k)]):
            return "probabilities", 0, t + 1
    return None


def explain(trace: Trace) -> str | None:
    """One plain line for the page: the model computes NaN, where it first appears, what that means; None when
    the run is all numbers."""
    found = first_nonfinite(trace)
    if found is None:
        return None
    what, layer, step = found
    head = "This model computes NaN (or infinity): "
    tail = (" Everything computed after it is NaN too. Its weights hold NaN or infinite values (what a diverged "
            "training run leaves), at that layer or before it; the command line's `trace` writes the same numbers.")
    if what in KIND_NAMES:
        at = f" at step {step}" if step is not None else ""
        return (f"{head}it first appears in {KIND_NAMES[what]}, layer {layer}{at}: those weights are drawn as 0 "
                f"(blank cells).{tail}")
    if what == "layer output":
        return (f"{head}every attention weight is a number, but decoder layer {layer}'s output is NaN from step "
                f"{step} (the logit lens's reading): the NaN starts after that layer's attention, in its "
                f"feed-forward block, its layer norm or the output projection; the next-token probabilities "
                f"show as NaN.{tail}")
    return (f"{head}every attention weight is a number, but the next-token probabilities are NaN from step {step}: "
            f"the NaN starts after the last attention, in a feed-forward block, a layer norm or the output "
            f"projection (switch the logit lens on to see which decoder layer's output first holds it).{tail}")
