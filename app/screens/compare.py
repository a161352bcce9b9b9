"""Compare two runs: two models on one sentence (healthy against broken, ours against yours), or one
model on two sentences (a minimal pair). Both pictures side by side for one head (or a layer's mean over
heads), one step bar for both, and below them A − B on a diverging scale where rows and columns match (the
same token at the same position on both sides: model.analysis.compare). Side A is the sidebar's model; the
page's state is in its link (app/screens/page_url.py), which reproduces the comparison.

Runs are greedy decodes, cached like Explore's (services.get_trace); figures in app/render/compare.py.
"""

from __future__ import annotations

import streamlit as st
from attention_lens.app import registry, services, state
from attention_lens.app.render import compare as render
from attention_lens.app.render import views
from attention_lens.app.screens import aligned, page_url
from attention_lens.app.services import CheckpointError, DecodeOptions, ModelInputError

KINDS = state.KINDS_BY_CODE
K_A_TEXT, K_B_MODEL, K_B_TEXT = "cmp_a_text", "cmp_b_model", "cmp_b_text"
K_KIND, K_LAYER, K_HEAD, K_STEP = "cmp_kind", "cmp_layer", "cmp_head", "cmp_step"
DEFAULT_A, DEFAULT_B = "the dog sat near the bank of the river .", "the man found the bank ."
# The same minimal pair as people type it, for a model that reads raw text (the everyday models)
RAW_A, RAW_B = "The dog sat near the bank of the river.", "The man found the bank."
MEAN = 0  # the head selector's "mean over the layer's heads"


def _positive(raw: str) -> int:
    value = int(raw)
    if value < 0:
        raise ValueError("must be 0 or more")
    return value


# Link parameters besides `model` (side A's model): a_text, b_model, b_text, kind, layer, head (0 = mean), step
URL_RULES = {"a_text": (K_A_TEXT, str, str), "b_model": (K_B_MODEL, str, str), "b_text": (K_B_TEXT, str, str),
             "kind": (K_KIND, page_url.one_of(tuple(KINDS)), str), "layer": (K_LAYER, _positive, str),
             "head": (K_HEAD, _positive, str), "step": (K_STEP, _positive, str)}


def run(model_key: str, text: str):
    """The cached greedy run, or None with the reason shown."""
    try:
        return services.get_trace(model_key, text, None, DecodeOptions())
    except (ModelInputError, CheckpointError) as exc:
        st.error(state.text(exc))
        return None


def inputs(model_key: str) -> tuple[str, str, str]:
    """Side A's sentence, side B's model and sentence."""
    keys = [e.key for e in registry.entries()]
    if model_key not in keys:
        keys.append(model_key)
    if st.session_state.get(K_B_MODEL) not in keys:
        st.session_state[K_B_MODEL] = model_key
    left, right = st.columns(2)
    a_text = left.text_input(f"A: {model_key} (the sidebar's model)", key=K_A_TEXT)
    cols = right.columns([1, 2])
    b_model = cols[0].selectbox("B: model", keys, key=K_B_MODEL)
    b_text = cols[1].text_input("B: sentence", key=K_B_TEXT)
    return a_text, b_model, b_text


def clamp(key: str, top: int, low: int = 1) -> int:
    """The session value of key within [low, top] (a link or another run may have left it outside)."""
    value = min(max(int(st.session_state.get(key, low)), low), top)
    st.session_state[key] = value
    return value


def main() -> None:
    model_key, engine = page_url.open_page(
        "compare", URL_RULES, "Compare",
        "Two runs side by side: two models on one sentence, or one model on two sentences; below, their difference "
        "where the tokens match.",
        {K_KIND: "cross", K_LAYER: 1, K_HEAD: 1, K_STEP: 1})
    raw = state.text_kind(engine.card) == "raw"
    st.session_state.setdefault(K_A_TEXT, RAW_A if raw else DEFAULT_A)
    st.session_state.setdefault(K_B_TEXT, RAW_B if raw else DEFAULT_B)
    aligned.compare_box(model_key, K_A_TEXT, K_B_MODEL, K_B_TEXT, K_KIND, K_LAYER, K_HEAD)  # healthy vs aligned
    a_text, b_model, b_text = inputs(model_key)
    a, b = run(model_key, a_text), run(b_model, b_text)
    if a is None or b is None:
        page_url.write(URL_RULES, sentence=False)
        return
    engine_b = services.get_engine(b_model)
    layers = min(a.cross_attention.shape[0], b.cross_attention.shape[0])
    if st.session_state[K_KIND] == "enc":
        layers = min(a.encoder_self_attention.shape[0], b.encoder_self_attention.shape[0])
    heads = min(engine.n_heads, engine_b.n_heads)
    # The kind switch on a row of its own: its three titles do not fit beside the boxes (cut at 1366 px)
    code = st.segmented_control("Attention", list(KINDS), key=K_KIND, required=True,
                                format_func=lambda c: KINDS[c][1])
    cols = st.columns([1, 1, 4], vertical_alignment="bottom")
    clamp(K_LAYER, layers)
    layer = cols[0].selectbox("Layer", list(range(1, layers + 1)), key=K_LAYER)
    clamp(K_HEAD, heads, low=MEAN)
    head = cols[1].selectbox("Head", list(range(heads + 1)), key=K_HEAD,
                             format_func=lambda h: "mean" if h == MEAN else str(h))
    top = max(a.m, b.m)
    clamp(K_STEP, top)
    step = cols[2].slider("Step (both sides)", 1, top, key=K_STEP) if top > 1 else 1
    kind, title = KINDS[code]
    step_a, step_b = min(step, a.m), min(step, b.m)
    picked = None if head == MEAN else head
    which = f"layer {layer} · {'mean over heads' if picked is None else f'head {picked}'}"
    left, right = st.columns(2)
    for col, trace, name, s, key in ((left, a, f"A: {model_key}", step_a, "cmp_a"),
                                     (right, b, f"B: {b_model}", step_b, "cmp_b")):
        with col:
            col.plotly_chart(render.side_figure(trace, kind, s, layer, picked,
                                                 f"{name}<br>{title} · {which}"),
                             key=key, theme=None, config={"displayModeBar": False})
            col.caption(f"Step {s} of {trace.m}: {state.text(' '.join(trace.target_tokens[:s]))}")
    diff = services.difference(a, b, kind, step_a, step_b, layer, picked)
    if not diff.rows or not diff.cols:
        st.info("No row and column carry the same token at the same position on both sides: there is no "
                "difference to draw.")
    else:
        q_a = views.at_step(a, kind, step_a)
        st.plotly_chart(render.difference_figure(diff.values, [q_a.q_labels[i] for i in diff.rows],
                                                 [q_a.k_labels[j] for j in diff.cols],
                                                 f"A − B · {title} · {which} (matching tokens only)"),
                        key="cmp_diff", theme=None, config={"displayModeBar": False})
        st.caption(f"Blue: A put more weight there, red: B did. {len(diff.rows)} of the rows and {len(diff.cols)} "
                   f"of the columns match (same token, same position); largest difference "
                   f"{abs(diff.values).max():.3f}.")
    page_url.write(URL_RULES, sentence=False)


main()
