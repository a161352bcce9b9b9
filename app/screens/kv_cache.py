"""Explore's key-value cache panel: what each decoder layer has cached at the current step, the work of this step
and of the whole generation with and without the cache, and (asked for) the engine's own timing of this step
cached against a recompute, with their rows compared. Compute in model/analysis/kv_cache.py (through
app/services.py), drawing in app/render/kv_cache.py; this file lays them out.
"""

from __future__ import annotations

import streamlit as st
from attention_lens.app import services
from attention_lens.app.render import kv_cache as kr
from attention_lens.app.screens import charts
from attention_lens.app.services import CheckpointError, ModelInputError

K_MEASURE = "kv_measure"
K_OPEN = "kv_open"  # the panel is open (the tour's cache stop sets it)
ERRORS = (ModelInputError, CheckpointError, ValueError)


def panel(model_key: str, trace, step: int) -> None:
    """step: how many decoder rows the page shows (1..m); the cache is the one after the last of them. Drawn
    only while the expander is open: a step click then sends one element here, not seven, which keeps a
    class's clicks light on the server and the websocket."""
    box = st.expander("Key–value cache at this step", icon=":material/memory:", key=K_OPEN, on_change="rerun")
    if box.open:
        with box:
            _contents(model_key, trace, step)


def _contents(model_key: str, trace, step: int) -> None:
    if trace.options.mode == "teacher_forced":
        st.caption("Teacher forcing computes every row in one parallel pass over the whole reference: there is "
                   "no step-by-step decoding, so nothing is cached. Choose greedy, beam or sampling to see it.")
        return
    try:
        dims = services.kv_dims(model_key)
    except ERRORS as exc:
        st.caption(str(exc))
        return
    t, n, layers = step - 1, trace.n, dims.layers
    rows = services.expected_rows(n, t, layers)[0]
    st.markdown(f"At step {step}, each of the {layers} decoder layers holds the keys and values of "
                f"{rows[0]} target position{'s' * (rows[0] != 1)} ({t} reused, 1 computed now) and of the "
                f"{n} source positions (computed once, at step 1).")
    charts.svg(kr.cache_svg(trace.decoder_input_tokens, trace.source_tokens, t, layers), key="kv_cache_svg")
    cached, recompute = services.step_macs(dims, n, t, True), services.step_macs(dims, n, t, False)
    st.html(kr.counts_table(cached, recompute, services.generation_macs(dims, n, trace.m, True),
                            services.generation_macs(dims, n, trace.m, False), trace.m))
    st.caption(f"Counted from this model's sizes (d_model {dims.d_model}, d_ff {dims.d_ff}, {layers} decoder "
               f"layers, vocabulary {dims.vocab}); the encoder runs once either way and is left out. With the "
               "cache a step's attention work grows with the length so far (O(t·d + n·d)); recomputing, every "
               "step redoes every earlier position, so a whole generation costs O(T²) more.")
    if K_MEASURE not in st.session_state:
        st.session_state[K_MEASURE] = False
    if not st.toggle("Time this step on the server (median of 5)", key=K_MEASURE):
        return
    try:
        got = services.kv_measure(model_key, trace.normalised_source,
                                  tuple(s.id for s in trace.steps), t)
    except ERRORS as exc:
        st.error(str(exc))
        return
    cols = st.columns(4)
    cols[0].metric("Cached step", f"{got.cached_seconds * 1e3:.2f} ms")
    cols[1].metric("Recompute of the same step", f"{got.recompute_seconds * 1e3:.2f} ms",
                   help="Every decoder position 0..t from scratch, the encoder output reused.")
    cols[2].metric("Ratio", f"{got.recompute_seconds / max(got.cached_seconds, 1e-9):.1f}×")
    same = got.max_attention_difference <= 1e-5
    cols[3].metric("Rows equal", "yes" if same else "NO", help="Largest difference between the cached "
                   f"step's attention rows and the recompute's: {got.max_attention_difference:.1e} (logits: "
                   f"{got.max_logit_difference:.1e}); float32 rounding is about 1e-7.")
    before = got.rows_before[0] if got.rows_before else "nothing yet"
    st.caption(f"Read off the engine's own cache tensors, per layer (self rows, cross rows): before this step "
               f"{before}, after it {got.rows_after[0]}.")
