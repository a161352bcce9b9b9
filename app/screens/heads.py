"""Heads: every head of every kind ranked by how much the teacher-forced loss rises when it alone is switched
off (Michel et al. 2019), drawn as a layers x heads grid per kind; a head's button opens it on Explore.

Compute lives in model/analysis/ablation.py (through services.head_ranking, cached), figures in
app/render/contrib.py; this file only lays them out.
"""

from __future__ import annotations

import numpy as np
import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import contrib
from attention_lens.app.screens import explore_controls as ctl
from attention_lens.app.screens import explore_url as url
from attention_lens.app.screens import heads_roles, page_url
from attention_lens.app.services import ModelInputError

KINDS = state.KINDS_BY_CODE
SIZES = [25, 50, 100, 200]
K_N, K_ASKED, K_DATA, K_FILE, K_KIND = "heads_n", "heads_asked", "heads_data", "heads_file", "heads_kind"
DATA = {"test": "Test split", "file": "Your file"}
SHOWN = {"all": "All kinds"} | {code: title for code, (_, title) in KINDS.items()}
# The page's link parameters besides the model (app/screens/page_url.py); a file cannot travel in a link, so
# `data=file` opens the upload box
URL_RULES = {"data": (K_DATA, page_url.one_of(tuple(DATA)), str), "n": (K_N, page_url.number_in(SIZES), str),
             "kind": (K_KIND, page_url.one_of(tuple(SHOWN)), str)}
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


def pairs_ui(model_key: str) -> tuple[str, tuple[tuple[str, str], ...] | None]:
    """Which pairs the ranking runs on: the first n of the test split, or the user's own file (source<TAB>
    target[<TAB>gold] per line, as on the Alignment page). Returns (what they are, the pairs: (source, target) of
    the test split, (source, target, gold) of a file), pairs None
    when the file is missing or cannot be used (the page says why)."""
    data = st.segmented_control("Pairs", list(DATA), key=K_DATA, format_func=DATA.get, required=True,
                                label_visibility="collapsed")
    if data != "file":
        try:
            test = services.test_pairs(model_key, SIZES[0])
        except ModelInputError as exc:  # no test split of this model's own language (a Hugging Face model)
            st.info(state.text(exc) + " Choose “Your file” above.")
            return "", None
        n = st.select_slider("Test pairs", SIZES, key=K_N)
        test = test if n == SIZES[0] else services.test_pairs(model_key, n)
        return f"the first {n} pairs of the test split", tuple(test)
    up = st.file_uploader(f"Your pairs: a TSV, source<TAB>target per line ({services.UPLOAD_CAP_TEXT})",
                          type=["tsv", "txt"], key=K_FILE, max_upload_size=services.UPLOAD_MAX_MB)
    if up is None:
        st.caption("Upload a file to rank the heads on your own sentences (the test split is one click away).")
        return "", None
    too_big = services.upload_size_problem(state.text(up.name), up.size)
    if too_big:
        st.error(too_big)
        return "", None
    try:
        examples, problems = services.alignment.parse_tsv(up.getvalue().decode("utf-8"))
    except UnicodeDecodeError:
        problems = [f"{up.name} is not UTF-8 text"]
    if problems:
        st.error("This file cannot be used:\n\n" + state.text("\n".join(f"- {p}" for p in problems[:10])))
        return "", None
    # the gold column is kept: the roles name a cross-attention head "aligning" only against gold links
    return f"the {len(examples)} pairs of {up.name}", tuple((e.source, e.target, e.gold) for e in examples)


def name_pairs(what: str, pairs: tuple[tuple[str, str], ...]) -> None:
    """The pairs a ranking used, each one line (source → target)."""
    with st.expander(f"Ranked on {what}"):
        st.markdown("\n".join(f"{i + 1}. {state.text(p[0])} → {state.text(p[1])}" for i, p in enumerate(pairs)))


def main() -> None:
    model_key, engine = page_url.open_page(
        "heads", URL_RULES, "Heads",
        "Which heads matter: the teacher-forced loss when one head alone is switched off (Michel et al. 2019). "
        "Click a head to open it on Explore.",
        {K_DATA: "test", K_N: 50, K_KIND: "all"})
    what, pairs = pairs_ui(model_key)
    if pairs is None:
        page_url.write(URL_RULES, sentence=False)
        return
    asked = st.session_state.get(K_ASKED) == (model_key, pairs)
    if not asked and st.button("Rank every head", key="heads_rank", type="primary"):
        st.session_state[K_ASKED] = (model_key, pairs)
        asked = True
    if not asked:
        st.caption(f"Decodes {what} once per head ({count_text(engine)}), teacher forcing as the model was "
                   f"trained.")
        page_url.write(URL_RULES, sentence=False)
        return
    try:
        result = (services.head_ranking(model_key, st.session_state[K_N]) if st.session_state[K_DATA] == "test"
                  else services.head_ranking_on(model_key, tuple(p[:2] for p in pairs)))
    except ModelInputError as exc:
        st.info(state.text(exc))
        return
    st.markdown(f"Loss with every head on: **{result['base_loss']:.4f}** nats per token on {what}. Each cell: "
                f"how much it rises when that head alone is off (red: the most; the top three are highlighted).")
    name_pairs(what, pairs)
    roles = heads_roles.measure(model_key, st.session_state[K_DATA], st.session_state[K_N], pairs)
    heads_roles.rule_caption(roles)
    shown = st.segmented_control("Kinds shown", list(SHOWN), key=K_KIND, format_func=SHOWN.get, required=True,
                                 label_visibility="collapsed")
    for code in KINDS:
        if shown in ("all", code):
            layers = engine.n_encoder_layers if code == "enc" else engine.n_decoder_layers
            kind_grid(code, [h for h in result["heads"] if h["kind"] == code], layers, engine.n_heads)
            heads_roles.kind_roles(code, roles)
    page_url.write(URL_RULES, sentence=False)

main()
