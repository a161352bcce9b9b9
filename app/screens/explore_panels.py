"""Explore's panels beside and below the attention picture: the step's tokens and next-token chart, forcing a
token, the live beams and the exports."""

from __future__ import annotations

import streamlit as st

from app import exports, state
from app.render import bars, beams
from app.screens.explore_controls import K_FORCED, K_STEP, chips, joined


def _force(prefix_ids: tuple[int, ...], choice_key: str, ids: dict[str, int]) -> None:
    st.session_state[K_FORCED] = (*prefix_ids, ids[st.session_state[choice_key]])
    st.session_state[K_STEP] = len(prefix_ids) + 1


def _unforce() -> None:
    st.session_state[K_FORCED] = ()


# ---- views ----------------------------------------------------------------------------------------------------
def step_panel(engine, trace, step: int, teacher: bool, forced: int, present: bool) -> None:
    """The step's words, in the narrow column beside the picture (presenter mode: the words only)."""
    t = step - 1
    s = trace.steps[t]
    special = engine.special_pieces()
    st.markdown(f"**Step {step} of {trace.m}**")
    label = "Reference read so far" if teacher else "Output so far"
    st.container(key="prefix").markdown(f"<span class='lens-label'>{label}</span>"
                                        + chips(trace.target_tokens[:step], now=t, forced=forced, special=special),
                                        unsafe_allow_html=True)
    st.markdown(f"<span class='lens-label'>as text</span> {state.text(joined(trace.target_tokens[:step]))}",
                unsafe_allow_html=True)
    st.markdown(f"<span class='lens-label'>row {t} read</span>"
                + chips([trace.decoder_input_tokens[t]], cls="read", special=special)
                + f"<span class='lens-label'>and {'had to predict' if teacher else 'chose'}</span>"
                + chips([trace.target_tokens[t]], now=0), unsafe_allow_html=True)
    if teacher:
        verdict = ":green[matches]" if s.extra.get("correct") else ":red[differs from]"
        st.markdown(f"Model's top guess: {chips([s.token])} ({s.prob:.1%}) {verdict} the reference "
                    f"{chips([trace.target_tokens[t]])} (p = {s.extra.get('target_prob', 0):.1%}).",
                    unsafe_allow_html=True)


def topk_panel(trace, step: int, teacher: bool) -> None:
    """The next-token distribution at the step, as HTML bars (app/render/bars.py)."""
    s = trace.steps[step - 1]
    st.container(key="topk").markdown(
        bars.topk_html(s.top_k, chosen=s.token, reference=trace.target_tokens[step - 1] if teacher else None,
                       title=f"Next token at step {step}", escape=state.text), unsafe_allow_html=True)
    st.caption("Orange: the token " + ("the model would pick; outlined: the reference." if teacher
                                       else "decoding chose."))


def force_ui(engine, trace, step: int) -> None:
    t = step - 1
    s = trace.steps[t]
    ids = {tok: i for tok, _ in s.top_k if tok != s.token and (i := engine.piece_to_id(tok)) is not None}
    cols = st.columns([3, 2], vertical_alignment="bottom")
    if ids:
        cols[0].selectbox("Force another token here", list(ids), key="force_choice",
                          help="Re-decode from here as if the model had chosen this candidate.")
        prefix = tuple(trace.steps[i].id for i in range(t))
        cols[1].button("Force it", key="force", on_click=_force, args=(prefix, "force_choice", ids),
                       width="stretch")
    else:
        cols[0].caption("No other candidate can be forced here.")
    if st.session_state.get(K_FORCED):
        st.button("Undo forcing", key="unforce", on_click=_unforce)


def beam_panel(trace, step: int, special: frozenset[str] = frozenset()) -> None:
    """The beam table (app/render/beams.py, E-LAB): finished hypotheses, the chosen one first, then the live."""
    st.markdown("#### Beams")
    if trace.beam_steps:
        shown = min(step, len(trace.beam_steps))
        st.markdown(f"What the search holds after step {shown}:")
        st.dataframe(beams.beam_rows(trace, step, special), hide_index=True, width="stretch", key="beam_table")
    st.caption("Beam search keeps the K best partial translations at every step; a hypothesis is finished once "
               "it writes the end token, and the best finished one (log-prob per piece) is the translation. "
               "Each has its own attention, chosen with 'Hypothesis' above.")


def export_panel(trace, fig, name: str, run_name: str, title: str = "") -> None:
    """name: the picture's file name, run_name: the run's (app.exports.file_stem); title: the picture's."""
    with st.expander("Export this run"):
        cols = st.columns(6)
        if exports.image_export_available():
            cols[0].download_button("PNG (this view)", lambda: exports.image(fig, "png", title=title), f"{name}.png",
                                    "image/png", key="dl_png", on_click="ignore")
            cols[1].download_button("SVG (this view)", lambda: exports.image(fig, "svg", title=title), f"{name}.svg",
                                    "image/svg+xml", key="dl_svg", on_click="ignore")
        else:
            cols[0].info("PNG/SVG need Chrome or Chromium on the server; use the download button above a chart.")
        cols[2].download_button("HTML report", lambda: exports.html_report(trace), f"{run_name}.html", "text/html",
                                key="dl_html", on_click="ignore")
        cols[3].download_button("CSV (long)", lambda: exports.csv_bytes(trace), f"{run_name}.csv", "text/csv",
                                key="dl_csv", on_click="ignore")
        cols[4].download_button("Trace JSON", lambda: exports.json_bytes(trace), f"{run_name}.json",
                                "application/json", key="dl_json", on_click="ignore")
        cols[5].download_button("Trace NPZ", lambda: exports.npz_bytes(trace), f"{run_name}.npz",
                                "application/octet-stream", key="dl_npz", on_click="ignore")
        st.caption("The HTML report holds every step and every attention map and opens offline; the CSV has one "
                   "row per weight (kind, layer, head, query, key, weight).")


