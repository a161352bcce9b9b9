"""Leakage lab, view "Three more bugs": the mask after the softmax, the swapped cross-attention and the missing
1/sqrt(d_k), each switched on for one teacher-forced run (an argument of that run: the loaded model is never
changed), with the one-line account of the bug and a meter of its effect against the healthy run.

Compute lives in model/analysis/bug_meters.py (through app/services.py), figures in app/render/bugs.py.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import bugs as bf
from attention_lens.app.render import figures, views
from attention_lens.app.screens.explore.panels import ask_for_reference
from attention_lens.app.services import DecodeOptions, ModelInputError

K_BUG = "leak_bug"
NAMES = {"mask_after_softmax": "Mask after the softmax", "swap_cross": "Cross-attention arguments swapped",
         "unscaled": "No 1/√d_k scaling"}


def bugs_view(model_key: str, engine, source: str, target: str, causal: bool, shift: bool,
              errors: tuple[type[Exception], ...]) -> None:
    if K_BUG not in st.session_state:
        st.session_state[K_BUG] = "mask_after_softmax"
    bug = st.radio("Bug", list(NAMES), key=K_BUG, format_func=NAMES.get, horizontal=True)
    st.markdown(f"**{NAMES[bug]}.** {services.BUG_EXPLAIN[bug]}")
    if bug not in engine.bug_switches:
        st.warning(engine.bug_notes.get(bug, "This model family cannot compute this switch."),
                   icon=":material/block:")
        return
    if not target.strip():
        ask_for_reference(model_key, source, "These runs are teacher-forced: type a reference target above (or pick "
                          "an example).", "bug_use_own")
        return
    base = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
    if bug == "mask_after_softmax":
        after_softmax(model_key, source, target, base, errors)
    elif bug == "swap_cross":
        swapped(model_key, engine, source, target, base, errors)
    else:
        unscaled(model_key, source, target, base, errors)


def after_softmax(model_key: str, source: str, target: str, base: DecodeOptions, errors) -> None:
    trace = state.shown_trace(model_key, source, target, replace(base, mask_after_softmax=True), errors)
    if trace is None:
        return
    meter = services.row_sums(trace)
    cols = st.columns(3)
    cols[0].metric("Smallest row sum", f"{meter.min_sum:.1%}", help="A softmax row sums to 100%.")
    cols[1].metric("Mean share lost", f"{meter.mean_missing:.1%}",
                   help="1 − the row sum, averaged over every row, head and layer of the decoder self-attention.")
    cols[2].metric("Weight on the future", f"{meter.max_future:.1%}",
                   help="The largest weight any row puts on a later position: 0 wherever the mask was applied.")
    labels = figures.row_labels(trace.decoder_input_tokens, trace.target_tokens)
    st.plotly_chart(bf.row_sum_bars(labels, meter.sums.min(axis=(0, 1)), meter.sums.mean(axis=(0, 1)),
                                    "Decoder self-attention: what each row sums to"),
                    key="leak_bug_rowsums", config={"displayModeBar": False})
    if not base.causal:
        st.caption("The causal mask is off above, so nothing is masked and every row still sums to 1: switch it on.")
    else:
        st.caption("The first row keeps only its own weight and loses the most; the last row masks nothing and "
                   "sums to 1. The future weights are exactly 0, yet the survivors were normalised with the future's "
                   "scores in the denominator: what the later tokens are still shapes every row.")
    st.plotly_chart(views.attention_figure(trace, "decoder_self_attention", "grid", trace.m),
                    key="leak_bug_grid", config={"displaylogo": False})


def swapped(model_key: str, engine, source: str, target: str, base: DecodeOptions, errors) -> None:
    options = replace(base, swap_cross=True)
    try:
        services.get_trace(model_key, source, target, options)
    except ModelInputError as exc:
        st.error(f"On this sentence: {exc}", icon=":material/error:")
    else:
        st.success("Source and target have the same length here, so the swap runs without any error.")
    try:
        same = services.equal_length_target(model_key, source, target)
    except errors as exc:
        st.error(str(exc))
        return
    if same is None:
        st.caption("No cut of the reference has exactly as many tokens as the source, so there is no equal-length "
                   "run to show: try another sentence.")
        return
    st.markdown(f"**With a target cut to the source's length**, “{state.text(same)}”, nothing complains:")
    trace = state.shown_trace(model_key, source, same, options, errors)
    if trace is None:
        return
    meter = services.swap_meter(trace)
    cols = st.columns(2)
    cols[0].metric("Largest weight on later target tokens", f"{meter.max_future:.1%}",
                   help="Source row i feeds decoder row i: what it takes from target positions after i is the "
                        "future, leaking into a decoder row that must not see it.")
    cols[1].metric("Mean weight on later target tokens", f"{meter.mean_future:.1%}")
    rows, keys = figures.labels(trace.source_tokens), figures.labels(trace.decoder_input_tokens)
    st.plotly_chart(figures.grid(meter.weights.mean(axis=1)[None], rows, keys, row_names=["mean over heads"],
                                 col_names=[f"layer {i + 1}" for i in range(meter.weights.shape[0])],
                                 title="The “cross-attention”: source positions (rows) attend to target positions"),
                    key="leak_bug_swap", config={"displaylogo": False})
    st.caption("Rows are source tokens, columns the tokens the decoder read: the roles of the healthy "
               "cross-attention reversed, and unmasked, so the decoder's future flows in through the back door.")


def unscaled(model_key: str, source: str, target: str, base: DecodeOptions, errors) -> None:
    healthy = state.shown_trace(model_key, source, target, base, errors)
    bug = state.shown_trace(model_key, source, target, replace(base, unscaled=True), errors)
    if healthy is None or bug is None:
        return
    a, b = services.sharpness(healthy), services.sharpness(bug)
    mean_a, mean_b = np.mean(list(a.entropy.values())), np.mean(list(b.entropy.values()))
    cols = st.columns(3)
    cols[0].metric("Mean row entropy, healthy", f"{mean_a:.3f} nats")
    cols[1].metric("Mean row entropy, no scaling", f"{mean_b:.3f} nats", delta=f"{mean_b - mean_a:+.3f}",
                   delta_color="off")
    cols[2].metric("Mean largest weight per row", f"{np.mean(list(b.top_weight.values())):.1%}",
                   delta=f"{np.mean(list(b.top_weight.values())) - np.mean(list(a.top_weight.values())):+.1%} "
                         "vs healthy", delta_color="off")
    left, right = st.columns(2)
    left.plotly_chart(bf.sharpness_bars(a.entropy, b.entropy, "Mean row entropy (lower: peakier)", "nats"),
                      key="leak_bug_entropy", config={"displayModeBar": False})
    right.plotly_chart(bf.sharpness_bars(a.top_weight, b.top_weight, "Mean largest weight per row", "weight"),
                       key="leak_bug_top", config={"displayModeBar": False})
    st.caption("Dot products of d_k-dimensional vectors grow like √d_k; without the division the softmax gets "
               "larger inputs, so its rows crowd onto one key. A model trained that way learns with vanishing "
               "gradients through those saturated rows.")
    st.plotly_chart(views.attention_figure(bug, "cross_attention", "mean", bug.m),
                    key="leak_bug_unscaled_grid", config={"displaylogo": False})
