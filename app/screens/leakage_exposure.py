"""Leakage lab, view "Training vs inference": the teacher-forced pass and the free-running decode of the same
sentence side by side, step by step; equal rows while the prefixes agree, then the step where they part, and
the naive p^T estimate against the real product of probabilities. Compute in model/analysis/exposure.py
(through app/services.py), figures in app/render/exposure.py; the two runs' cross-attention step by step in the
browser under one step bar (app/screens/pair_stepper), with the line of each step (equal or different).
"""

from __future__ import annotations

import pandas as pd
import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import exposure as xf
from attention_lens.app.screens import pair_stepper
from attention_lens.app.screens.explore.panels import ask_for_reference
from attention_lens.app.services import DecodeOptions

K_STEP, K_LAYER = "exp_step", "exp_layer"


def row_notes(r) -> list[dict]:
    """The line over the two pictures at each step: is that row the same in both runs (pair_stepper notes)."""
    out = []
    for t, d in enumerate(r.row_difference):
        equal = d <= 1e-5
        out.append({"text": f"Row {t + 1}:", "badge": "equal" if equal else "different", "tone": "ok" if equal
                    else "warn", "detail": f"largest difference {d:.1e}" if equal else f"largest difference {d:.3f}"})
    return out


def exposure_view(model_key: str, engine, source: str, target: str, causal: bool, shift: bool,
                  errors: tuple[type[Exception], ...]) -> None:
    if not target.strip():
        ask_for_reference(model_key, source, "The comparison needs a reference target: type one above (or pick an "
                          "example).", "exp_use_own")
        return
    try:
        r = services.side_by_side(model_key, source, target, causal, shift)
    except errors as exc:
        st.error(str(exc))
        return
    st.markdown("**Two programs, one model.** Training (teacher forcing) computes every row in one parallel pass, "
                "each row reading the *reference* prefix; inference (free running) computes one row per step, each "
                "reading the model's *own* earlier choices. With the causal mask a row depends only on the prefix it "
                "read, so the two compute the same row as long as the prefixes agree.")
    if r.first_difference is None:
        st.success(f"The model wrote the reference itself: the prefixes never part, and all {r.shared} shared rows "
                   f"are equal (largest difference {r.row_difference.max(initial=0.0):.1e}).")
    else:
        t = r.first_difference
        wrote = f"at step {t} the model wrote “{state.text(r.free_output[t - 1])}” where the reference has " \
                f"“{state.text(r.reference[t - 1])}”" if t > 0 else "the very first row already reads different " \
                                                                     "inputs (the shift is off)"
        st.warning(f"**The prefixes part at step {t + 1}**: {wrote}. Rows before it are equal (largest "
                   f"difference {r.row_difference[:t].max(initial=0.0):.1e}); from there on generation reads inputs "
                   f"training never showed it (exposure bias), and the rows differ by up to "
                   f"{r.row_difference[t:].max(initial=0.0):.2f}.", icon=":material/call_split:")
    if not r.causal:
        st.caption("The causal mask is off: teacher forcing's rows also weigh later positions that generation never "
                   "has, so even rows with the same prefix differ. Switch it on to see them agree.")
    cols = st.columns(4)
    n_ref = len(r.reference)
    cols[0].metric("Teacher-forced accuracy", f"{r.tf_accuracy:.0%}", help="Rows whose top prediction is the "
                   "reference token, reading the reference prefix.")
    cols[1].metric(f"Naive p^T (T = {n_ref})", f"{r.naive:.3g}", help="The per-token accuracy to the power of the "
                   "length: the textbook estimate of a flawless output (0.95^20 ≈ 0.36).")
    cols[2].metric("Π p(reference), teacher forcing", f"{r.product_tf:.3g}",
                   help="The probability the model gives the whole reference: the product of the per-step "
                        "probabilities of the reference tokens.")
    cols[3].metric("Π p(reference), free running", f"{r.product_free:.3g}",
                   help=f"The same product along the model's own prefixes ({r.shared} steps both runs have): "
                        "after the parting step it reads its own tokens, not the reference's.")
    st.plotly_chart(xf.probability_lines(r.reference, r.p_tf, r.p_free, r.first_difference),
                    key="exp_probs", config={"displayModeBar": False})

    steps = list(range(1, r.shared + 1))
    if st.session_state.get(K_STEP) not in steps:
        st.session_state[K_STEP] = min(steps[-1], (r.first_difference or r.shared - 1) + 1)
    if st.session_state.get(K_LAYER) not in range(engine.n_decoder_layers):
        st.session_state[K_LAYER] = engine.n_decoder_layers - 1
    layer = st.columns([1, 3])[0].selectbox("Layer", range(engine.n_decoder_layers), key=K_LAYER,
                                            format_func=lambda i: f"layer {i + 1}")
    pair_stepper.hide_server_steps()
    with st.container(key="exp_server_steps"):  # hidden: the step as a server widget, for scripted clients
        step = st.select_slider("Step", steps, key=K_STEP) if len(steps) > 1 else 1
    try:  # the same two runs as Traces (cached), for the stepper: it steps through both in the browser
        tf = services.get_trace(model_key, source, target, DecodeOptions(mode="teacher_forced", causal=causal,
                                                                         shift=shift))
        free = services.get_trace(model_key, source, None, DecodeOptions(mode="greedy"))
    except errors as exc:
        st.error(str(exc))
        return
    special = engine.special_pieces()
    sides = [pair_stepper.Side(tf, ("teacher_forced", model_key, source, target, causal, shift), teacher=True,
                               special=special),
             pair_stepper.Side(free, ("greedy", model_key, source), special=special)]
    which = f"layer {layer + 1}, mean over its heads"
    with st.container(key="exp_pair"):
        pair_stepper.draw("exp_stepper", sides, step, K_STEP, m=r.shared, kind="cross_attention", view="layer_mean",
                          layer=layer, head=0, notes=row_notes(r), mark_row=r.first_difference,
                          titles=[["Training: teacher forcing · cross-attention", which],
                                  ["Inference: free running · cross-attention", which]])
    st.caption("Mean over the heads of the chosen layer; rows read the token left of the arrow and predict (or "
               "choose) the one on the right. The row whose label is outlined (dashed) is where the prefixes part.")
    st.dataframe(pd.DataFrame({
        "step": steps, "reference": r.reference[: r.shared], "training reads": r.tf_inputs[: r.shared],
        "inference reads": r.free_inputs[: r.shared], "inference chose": r.free_output[: r.shared],
        "p(ref), training": r.p_tf[: r.shared], "p(ref), inference": r.p_free,
        "row difference": r.row_difference}), hide_index=True, key="exp_table",
        column_config={"p(ref), training": st.column_config.NumberColumn(format="%.4f"),
                       "p(ref), inference": st.column_config.NumberColumn(format="%.4f"),
                       "row difference": st.column_config.NumberColumn(format="%.1e")})
