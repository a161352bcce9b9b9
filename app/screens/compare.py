"""Compare two runs: two models on one sentence (healthy against broken, ours against yours), or one
model on two sentences (a minimal pair). Both pictures side by side for one head (or a layer's mean over
heads), one step bar for both, and below them A − B on a diverging scale where rows and columns match (the
same token at the same position on both sides: model.analysis.compare). The two sides, the bar and the
difference are one stepper component fed both runs (app/screens/pair_stepper): stepping redraws them in the
browser, with no script run. Side A is the sidebar's model; the page's state is in its link
(app/screens/page_url.py), which reproduces the comparison.

Runs are greedy decodes, cached like Explore's (services.get_trace). On a speech model each side is a clip
(app/screens/compare_clips): its spectrogram under the keys and its players, as on Explore.
"""

from __future__ import annotations

import streamlit as st
from attention_lens.app import registry, services, state
from attention_lens.app.screens import guided_alignment, page_url, pair_stepper
from attention_lens.app.screens.compare_clips import K_A_CLIP, K_B_CLIP, clip_inputs, clip_side
from attention_lens.app.services import CheckpointError, DecodeOptions, ModelInputError

KINDS = state.KINDS_BY_CODE
K_A_TEXT, K_B_MODEL, K_B_TEXT = "cmp_a_text", "cmp_b_model", "cmp_b_text"
K_KIND, K_LAYER, K_HEAD, K_STEP = "cmp_kind", "cmp_layer", "cmp_head", "cmp_step"
K_DIFF = "cmp_diff_range"  # A − B's colour scale: -r .. +r, fixed (r chosen here), so a colour means one amount
DIFF_RANGES = (1.0, 0.5, 0.25, 0.1)
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
             "head": (K_HEAD, _positive, str), "step": (K_STEP, _positive, str),
             "diff": (K_DIFF, page_url.number_in(DIFF_RANGES, float), lambda r: f"{r:g}"),
             "a_clip": (K_A_CLIP, str, str), "b_clip": (K_B_CLIP, str, str)}  # a speech model's shipped clips


def run(model_key: str, text: str, side: str):
    """The cached greedy run, or None with the reason shown, naming its side ("A" or "B")."""
    try:
        return services.get_trace(model_key, text, None, DecodeOptions())
    except (ModelInputError, CheckpointError) as exc:
        st.error(f"{side}: {state.text(exc)}")
        return None


def model_keys(model_key: str) -> list[str]:
    """The models side B may open (side A's among them, and B's choice kept only if it is one of them)."""
    keys = [e.key for e in registry.entries()]
    if model_key not in keys:
        keys.append(model_key)
    if st.session_state.get(K_B_MODEL) not in keys:
        st.session_state[K_B_MODEL] = model_key
    return keys


def inputs(model_key: str) -> tuple[str, str, str]:
    """Side A's sentence, side B's model and sentence."""
    keys = model_keys(model_key)
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
    guided_alignment.compare_box(model_key, K_A_TEXT, K_B_MODEL, K_B_TEXT, K_KIND, K_LAYER, K_HEAD)
    if services.is_speech(engine):  # a clip on each side
        chosen = clip_inputs(model_key, model_keys(model_key), K_B_MODEL)
        sides = None if chosen is None else (clip_side(model_key, chosen[0], "A"), clip_side(chosen[1], chosen[2], "B"))
    else:
        a_text, b_model, b_text = inputs(model_key)
        sides = text_sides(model_key, engine, a_text, b_model, b_text)
    if sides is None or None in sides:
        page_url.write(URL_RULES, sentence=False)
        return
    pair_view(model_key, engine, *sides)
    page_url.write(URL_RULES, sentence=False)


def text_sides(model_key: str, engine, a_text: str, b_model: str, b_text: str) -> tuple | None:
    """The two greedy runs of sentences as the pair's sides, or None (the reason shown)."""
    a, b = run(model_key, a_text, "A"), run(b_model, b_text, "B")
    if a is None or b is None:
        return None
    return (pair_stepper.Side(a, ("greedy", model_key, a_text), special=engine.special_pieces()),
            pair_stepper.Side(b, ("greedy", b_model, b_text), special=services.get_engine(b_model).special_pieces()))


def pair_view(model_key: str, engine, side_a: pair_stepper.Side, side_b: pair_stepper.Side) -> None:
    """The pair's choices (kind, layer, head, A − B's scale), then both runs and their difference in one stepper."""
    a, b = side_a.trace, side_b.trace
    b_model = side_b.run_key[1]
    engine_b = services.get_engine(b_model)
    layers = min(a.cross_attention.shape[0], b.cross_attention.shape[0])
    if st.session_state[K_KIND] == "enc":
        layers = min(a.encoder_self_attention.shape[0], b.encoder_self_attention.shape[0])
    heads = min(engine.n_heads, engine_b.n_heads)
    # The kind switch on a row of its own: its three titles do not fit beside the boxes (cut at 1366 px)
    code = st.segmented_control("Attention", list(KINDS), key=K_KIND, required=True,
                                format_func=lambda c: KINDS[c][1])
    cols = st.columns([1, 1, 1.6, 2.4], vertical_alignment="bottom")
    clamp(K_LAYER, layers)
    layer = cols[0].selectbox("Layer", list(range(1, layers + 1)), key=K_LAYER)
    clamp(K_HEAD, heads, low=MEAN)
    head = cols[1].selectbox("Head", list(range(heads + 1)), key=K_HEAD,
                             format_func=lambda h: "mean" if h == MEAN else str(h))
    if st.session_state.get(K_DIFF) not in DIFF_RANGES:
        st.session_state[K_DIFF] = 0.5
    diff_range = cols[2].selectbox("A − B colours", DIFF_RANGES, key=K_DIFF, format_func=lambda r: f"−{r:g} … +{r:g}",
                                   help="The difference's colour scale, the same at every step: a difference of "
                                        "this size or more is full colour, and 0 is white.")
    top = max(a.m, b.m)
    clamp(K_STEP, top)
    pair_stepper.hide_server_steps()
    with st.container(key="cmp_server_steps"):  # hidden: the step as a server widget, for scripted clients
        step = st.slider("Step (both sides)", 1, top, key=K_STEP) if top > 1 else 1
    kind, title = KINDS[code]
    picked = None if head == MEAN else head
    which = f"layer {layer} · {'mean over heads' if picked is None else f'head {picked}'}"
    # Both sides, the shared step bar and A − B below them step in the browser (app/screens/pair_stepper)
    with st.container(key="cmp_pair"):
        pair_stepper.draw("cmp_stepper", [side_a, side_b], step, K_STEP, m=top, kind=kind,
                          view="layer_mean" if picked is None else "head", layer=layer - 1, head=(picked or 1) - 1,
                          titles=[[f"A: {model_key}", f"{title} · {which}"], [f"B: {b_model}", f"{title} · {which}"]],
                          diff_title=f"A − B · {title} · {which} (matching tokens only)", diff_range=diff_range)


main()
