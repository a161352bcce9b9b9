"""Heads: every head of every kind ranked by how much the teacher-forced loss rises when it alone is switched
off (Michel et al. 2019), drawn as a layers x heads grid per kind; a head's button opens it on Explore.

Compute lives in model/analysis/ablation.py (through services.head_ranking, cached), figures in
app/render/contrib.py; this file only lays them out.
"""

from __future__ import annotations

import numpy as np
import streamlit as st

from app import services, state
from app.render import contrib
from app.screens import explore_controls as ctl
from app.screens import explore_url as url
from app.services import ModelInputError

KINDS = {"cross": ("cross_attention", "Cross-attention"), "dec": ("decoder_self_attention", "Decoder self-attention"),
         "enc": ("encoder_self_attention", "Encoder self-attention")}
SIZES = [25, 50, 100, 200]
K_N, K_ASKED = "heads_n", "heads_asked"
EXPLORE = "screens/explore.py"


def open_head(kind: str, layer: int, head: int) -> None:
    """Explore on exactly this head, as a link would open it (explore_url.apply: kind, the one-head view,
    layer and head, 1-based), at the step Explore was on; no preset's view hint replaces it."""
    ss = st.session_state
    ss[url.K_NOTICES] = url.apply({"kind": kind, "view": "head", "layer": str(layer), "head": str(head)})
    ss.setdefault(url.K_PRESET_SEEN, url.LINKED)
    ss[url.K_READ] = True  # the Heads page's own query parameters are not Explore's
    for widget in (ctl.K_KIND, ctl.K_VIEW, ctl.K_LAYER, ctl.K_HEAD):
        ss.pop(widget, None)
    st.switch_page(EXPLORE)


def count_text(engine) -> str:
    """How many heads are switched off in turn: "3 kinds × 3 layers × 4 heads" (or each kind's layers)."""
    enc, dec, h = engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads
    if enc == dec:
        return f"3 kinds × {dec} layers × {h} heads = {3 * dec * h} heads"
    return f"{enc} encoder + 2 × {dec} decoder layers × {h} heads = {(enc + 2 * dec) * h} heads"


def kind_grid(code: str, heads: list[dict], n_layers: int, n_heads: int) -> None:
    increase = np.zeros((n_layers, n_heads))
    for h in heads:
        increase[h["layer"] - 1, h["head"] - 1] = h["loss_increase"]
    st.plotly_chart(contrib.loss_grid(increase, KINDS[code][1]), key=f"heads_{code}", theme=None,
                    config={"displayModeBar": False})
    top = sorted(increase.ravel())[-3:]
    for layer in range(n_layers):
        cols = st.columns(n_heads)
        for head in range(n_heads):
            value = increase[layer, head]
            if cols[head].button(f"L{layer + 1} H{head + 1}  {value:+.3f}", key=f"open_{code}_{layer + 1}_{head + 1}",
                                 type="primary" if value >= top[0] and value > 0 else "secondary", width="stretch"):
                open_head(code, layer + 1, head + 1)


def main() -> None:
    model_key, engine = state.page_header(
        "Heads", "Which heads matter: the teacher-forced loss when one head alone is switched off (Michel et al. "
                 "2019). Click a head to open it on Explore.")
    n = st.select_slider("Test pairs", SIZES, value=50, key=K_N)
    asked = st.session_state.get(K_ASKED) == (model_key, n)
    if not asked and st.button("Rank every head", key="heads_rank", type="primary"):
        st.session_state[K_ASKED] = (model_key, n)
        asked = True
    if not asked:
        st.caption(f"Decodes the first {n} test pairs once per head ({count_text(engine)}), teacher forcing as "
                   f"the model was trained.")
        return
    try:
        result = services.head_ranking(model_key, n)
    except ModelInputError as exc:
        st.info(state.text(exc))
        return
    st.markdown(f"Loss with every head on: **{result['base_loss']:.4f}** nats per token on {n} pairs. Each cell: "
                f"how much it rises when that head alone is off (red: the most; the top three are highlighted).")
    for code in KINDS:
        layers = engine.n_encoder_layers if code == "enc" else engine.n_decoder_layers
        kind_grid(code, [h for h in result["heads"] if h["kind"] == code], layers, engine.n_heads)


main()
