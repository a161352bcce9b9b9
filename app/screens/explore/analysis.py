"""Explore's analyses beyond raw weights, called by the Explore screen: the reading switch
(weights / norm-weighted / rollout) for every view, the source / prefix bar of the current step, and
"switch this head off" with undo. Contributions and ablated runs are computed only when shown (each a cached
run of services.get_trace with its own options; the loaded model never changes)."""

from __future__ import annotations

from dataclasses import replace

import streamlit as st
from attention_lens.app import services
from attention_lens.app.render import contrib
from attention_lens.app.services import DecodeOptions, ModelInputError, Trace

READINGS = {"weights": "Weights", "norm_weighted": "Norm-weighted", "rollout": "Rollout"}
READING_HELP = ("Weights: the attention weights as computed. Norm-weighted: each weight times the norm of what "
                "that key sends through the head, ‖v W_O‖ (Kobayashi et al. 2020), rows renormalised. "
                "Rollout: attention composed across layers with the residual, 0.5A + 0.5I (Abnar & Zuidema "
                "2020); cross-attention composed with the encoder's rollout.")
K_READING, K_READING_KEEP, K_ABLATED = "reading", "reading_keep", "ablated"


def _keep_reading() -> None:
    if st.session_state.get(K_READING) in READINGS:
        st.session_state[K_READING_KEEP] = st.session_state[K_READING]


def reading_ui(col=None, disabled: bool = False) -> str:
    """The reading switch; returns "weights", "norm_weighted" or "rollout". Seeded from a keep key that no
    widget owns (a link sets it; Streamlit drops a widget's own key on a page that does not draw it). Disabled
    (greyed, its value kept) while no attention is on screen."""
    if st.session_state.get(K_READING_KEEP) not in READINGS:
        st.session_state[K_READING_KEEP] = "weights"
    st.session_state[K_READING] = st.session_state[K_READING_KEEP]
    (col or st).segmented_control("Reading", list(READINGS), key=K_READING, required=True, format_func=READINGS.get,
                                  help=READING_HELP, label_visibility="collapsed", on_change=_keep_reading,
                                  disabled=disabled)
    return st.session_state[K_READING_KEEP]


def as_reading(full: Trace, shown: Trace, reading: str) -> Trace:
    """`shown` (a run, or one beam hypothesis of it) with its attention arrays replaced by the reading, taken
    from `full`, the same run decoded with contributions."""
    match = next((b for b in (full, *full.beams) if b.target_tokens == shown.target_tokens), full)
    arrays = match.contributions[reading]
    return replace(shown, contributions=match.contributions, **{k: arrays[k] for k in services.KINDS})


def share_bar(shown: Trace, step: int) -> None:
    """The current step's prediction split into source and target prefix (needs contributions)."""
    if shown.contributions is None:
        return
    st.plotly_chart(contrib.share_bar(float(shown.contributions["source_share"][step - 1]), step), key="share",
                    theme=None, config={"displayModeBar": False})
    st.caption("Source vs target prefix: a norm-weighted decomposition of the residual stream through the "
               "decoder layers (a simplified ALTI+, Ferrando et al. 2022).")


def ablated(model_key: str) -> tuple[str, ...]:
    """The heads switched off for this model in this session (names as services.head_names gives them)."""
    return tuple(st.session_state.get(K_ABLATED, {}).get(model_key, ()))


def set_ablated(model_key: str, heads: tuple[str, ...]) -> None:
    st.session_state[K_ABLATED] = {**st.session_state.get(K_ABLATED, {}), model_key: heads}


def head_off_button(model_key: str, kind: str, layer: int, head: int) -> None:
    """In the one-head view: switch this head off (layer, head 0-based here, 1-based in the name)."""
    name = f"{services.CODE_OF[kind]}:{layer + 1}:{head + 1}"
    off = ablated(model_key)
    if name in off:
        st.caption(f"Head {name} is switched off.")
        return
    if st.button("Switch this head off", key="head_off", icon=":material/block:",
                 help="Decode again with this head's output set to zero (the model itself is unchanged)."):
        set_ablated(model_key, (*off, name))
        st.rerun()


def ablation_panel(model_key: str, source: str, target: str | None, options: DecodeOptions, shown: Trace) -> None:
    """With heads switched off: the translation and each step's probability of the original tokens, with
    and without them; undo the last, or switch every head back on."""
    off = ablated(model_key)
    if not off:
        return
    teacher = options.mode == "teacher_forced"
    base = replace(options, ablate=off, contributions=False, forced=())
    try:
        free = services.get_trace(model_key, source, target,
                                  replace(base, mode="teacher_forced") if teacher else replace(base, mode="greedy"))
        probe = free if teacher else services.get_trace(
            model_key, source, None, replace(base, mode="greedy", forced=tuple(s.id for s in shown.steps),
                                             max_len=shown.m))
    except ModelInputError as exc:
        st.info(str(exc))
        set_ablated(model_key, ())
        return
    key = "target_prob" if teacher else None
    before = [s.extra[key] if key else s.prob for s in shown.steps]
    after = [s.extra[key] if key else s.prob for s in probe.steps]
    with st.container(border=True, key="ablation"):
        st.markdown(f"**Heads switched off:** {', '.join(off)}")
        if not teacher:
            words = services.get_engine(model_key).detokenize
            st.markdown(f"Translation without them: **{words([x.id for x in free.steps])}**  \n"
                        f"with every head on: {words([x.id for x in shown.steps])}")
        st.plotly_chart(contrib.ablation_probs(list(shown.target_tokens), before, after), key="ablation_probs",
                        theme=None, config={"displayModeBar": False})
        undo, restore = st.columns(2)
        if undo.button("Undo", key="ablate_undo", icon=":material/undo:"):
            set_ablated(model_key, off[:-1])
            st.rerun()
        if restore.button("Switch every head back on", key="ablate_clear"):
            set_ablated(model_key, ())
            st.rerun()
