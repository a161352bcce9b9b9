"""Explore's "why this token" panel, under the attention picture: the logit lens of the step (what
each decoder layer would predict if the model stopped there) and the gradient saliency of the chosen token
(integrated gradients over the source and the target prefix, with each cross-attention head's rank agreement).
Each is computed only when its switch is on, as a cached run of services.get_trace with `lens` / `saliency` set
(the same run otherwise: a different option of the same input); figures in app/render/why.py."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st
from attention_lens.app import exports, services, state
from attention_lens.app.render import why
from attention_lens.app.screens.explore import controls as ctl
from attention_lens.app.screens.explore import stepper as explore_stepper
from attention_lens.app.services import DecodeOptions, ModelInputError, Trace

K_LENS, K_SALIENCY, K_SALIENCY_METHOD = "why_lens", "why_saliency", "why_saliency_method"
LENS_HELP = ("Each decoder layer's output at this step put through the model's own final norm and output "
             "projection: what the model would predict if it stopped after that layer (the logit lens). The "
             "last layer is the model's real prediction.")
SALIENCY_HELP = ("How much each source token and each earlier target token moved the chosen token's logit: "
                 "integrated gradients from the padding embedding (they add up to the logit's change from that "
                 "baseline), or input × gradient. Below: how well each cross-attention head's weights rank the "
                 "source tokens as the gradient does (Spearman's ρ).")
METHODS = {"source": "Integrated gradients", "source_input_x_gradient": "Input × gradient"}


def _run(model_key: str, source: str, target: str | None, options: DecodeOptions, shown: Trace, **asked) -> Trace:
    """The same run with the lens / saliency asked for; the hypothesis on show when decoding was a beam."""
    teacher = options.mode == "teacher_forced"
    forced = () if teacher else tuple(st.session_state.get(ctl.K_FORCED, ()))
    full = services.get_trace(model_key, source, target, replace(options, forced=forced, **asked))
    return next((b for b in (full, *full.beams) if b.target_tokens == shown.target_tokens), full)


def why_panel(model_key: str, source: str, target: str | None, options: DecodeOptions, shown: Trace,
              step: int) -> None:
    """Two switches and, when on, the lens table and the saliency row with the heads' agreement."""
    cols = st.columns([1, 1, 2], vertical_alignment="center")
    lens_on = cols[0].toggle("Logit lens", key=K_LENS, help=LENS_HELP)
    saliency_on = cols[1].toggle("Gradient saliency", key=K_SALIENCY, help=SALIENCY_HELP)
    if not (lens_on or saliency_on):
        return
    t = step - 1
    try:
        run = _run(model_key, source, target, options, shown, lens=lens_on, saliency=saliency_on)
    except ModelInputError as exc:
        st.info(state.text(exc))
        return
    if lens_on and run.lens is not None:  # every step's table at once: the stepper shows the step on screen's
        with st.container(key="why_lens_panel"):
            st.html(explore_stepper.per_step_html([lens_block(run, u) for u in range(run.m)]))
    if saliency_on and run.saliency is not None:
        row = run.saliency["steps"][t]
        method = cols[2].segmented_control("Attribution", list(METHODS), key=K_SALIENCY_METHOD, default="source",
                                           required=True, format_func=METHODS.get, label_visibility="collapsed")
        st.plotly_chart(why.saliency_row(run.source_tokens, run.decoder_input_tokens, row, method or "source"),
                        key="why_saliency_row", theme=None, config={"displayModeBar": False})
        st.caption(f"Integrated gradients: {row['intervals']} intervals, sum within "
                   f"{row['completeness_error']:.3g} of the logit's change from the baseline "
                   f"({row['logit'] - row['baseline_logit']:+.3f}; tolerance {run.saliency['tolerance']:.0%}).")
        st.plotly_chart(why.agreement_grid(row["spearman"]), key="why_agreement", theme=None,
                        config={"displayModeBar": False})
    downloads(run, model_key, step)


def lens_block(run: Trace, t: int) -> str:
    """The logit lens of step t + 1: its one-line summary and its table."""
    chosen = run.steps[t].token
    summary = state.text(why.lens_summary(run.lens, t, chosen))
    return (f"<p class='lens-why-head'><b>Logit lens at step {t + 1}</b>: {summary}</p>"
            + why.lens_html(run.lens, t, chosen, escape=state.text))


def downloads(run: Trace, model_key: str, step: int) -> None:
    """The run with its lens and / or saliency, as a Trace JSON, and the saliency as CSV."""
    stem = exports.file_stem(model_key, run, step)
    cols = st.columns(3)
    cols[0].download_button("Trace JSON with lens / saliency", lambda: exports.json_bytes(run), f"{stem}-why.json",
                            "application/json", key="why_dl_json", on_click="ignore")
    if run.saliency is not None:
        cols[1].download_button("Saliency CSV", lambda: exports.saliency_csv(run), f"{stem}-saliency.csv",
                                "text/csv", key="why_dl_csv", on_click="ignore")
