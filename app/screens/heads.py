"""Heads: every head of every kind ranked by how much the teacher-forced loss rises when it alone is switched
off (Michel et al. 2019), drawn as a layers x heads grid per kind; a head's button opens it on Explore.

Compute lives in model/analysis/ablation.py (through services.head_ranking, cached; an upload of any number of lines
through services.upload_head_ranking, streamed in batches under a progress bar), figures in app/render/contrib.py;
this file only lays them out.
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np
import streamlit as st
from attention_lens.app import services, state, uploads
from attention_lens.app.render import contrib
from attention_lens.app.screens import heads_roles, page_url
from attention_lens.app.screens.explore import controls as ctl
from attention_lens.app.screens.explore import url
from attention_lens.app.screens.heads_progress import progress_text
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
EXPLORE = "screens/explore/page.py"
PROGRESS_EVERY = 0.25  # seconds between two updates of the progress bar


def open_head(kind: str, layer: int, head: int) -> None:
    """Explore on exactly this head, as a link would open it (explore.url.apply: kind, the one-head view,
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


class Upload(NamedTuple):
    """A checked upload (uploads.check_upload) and its bytes."""

    name: str
    data: bytes
    checked: uploads.CheckedUpload


def pairs_ui(model_key: str) -> tuple[str, tuple[tuple[str, str], ...] | None, Upload | None]:
    """Which pairs the ranking runs on: the first n of the test split, or every pair of the user's own file
    (source<TAB>target[<TAB>gold] per line, as on the Alignment page, any number of lines up to the size cap).
    Returns (what they are, the (source, target) pairs named on the page, the upload when they are a file's);
    pairs None when the file is missing or cannot be used (the page says why)."""
    data = st.segmented_control("Pairs", list(DATA), key=K_DATA, format_func=DATA.get, required=True,
                                label_visibility="collapsed")
    if data != "file":
        try:
            test = services.pairs_of_test_split(model_key, SIZES[0])
        except ModelInputError as exc:  # no test split of this model's own language (a Hugging Face model)
            st.info(state.text(exc) + " Choose “Your file” above.")
            return "", None, None
        n = st.select_slider("Test pairs", SIZES, key=K_N)
        test = test if n == SIZES[0] else services.pairs_of_test_split(model_key, n)
        return f"the first {n} pairs of the test split", tuple(test), None
    up = st.file_uploader(f"Your pairs: a TSV, source<TAB>target[<TAB>gold] per line, any number of lines "
                          f"({uploads.UPLOAD_CAP_TEXT})", type=["tsv", "txt"], key=K_FILE,
                          max_upload_size=uploads.UPLOAD_SEEN_MB)
    if up is None:
        st.caption(f"Upload a file to rank the heads on your own sentences: every line of it is ranked, in "
                   f"batches, up to {uploads.UPLOAD_CAP_TEXT} (`attention-lens heads --data FILE.tsv` reads a file "
                   f"of any size). The test split is one click away.")
        return "", None, None
    name = state.text(up.name)
    too_big = uploads.upload_size_problem(name, up.size)
    if too_big:
        st.error(too_big)
        return "", None, None
    content = up.getvalue()
    checked = uploads.check_upload(content)
    if checked.problems:
        more = checked.problem_count - len(checked.problems)
        st.error(f"{name} cannot be used ({checked.problem_count:,} line(s) to fix):\n\n"
                 + state.text("\n".join(f"- {p}" for p in checked.problems))
                 + (f"\n- … and {more:,} more" if more > 0 else ""))
        return "", None, None
    # the gold column is kept: the roles name a cross-attention head "aligning" only against gold links
    return f"the {checked.pairs:,} pairs of {name}", checked.first, Upload(name, content, checked)


def name_pairs(what: str, pairs: tuple[tuple[str, str], ...], total: int) -> None:
    """The pairs a ranking used, each one line (source → target): the first HEADS_NAMED of a file."""
    with st.expander(f"Ranked on {what}"):
        st.markdown("\n".join(f"{i + 1}. {state.text(p[0])} → {state.text(p[1])}" for i, p in enumerate(pairs)))
        if total > len(pairs):
            st.caption(f"… and {total - len(pairs):,} more (the first {len(pairs)} are listed).")


def rank_upload(model_key: str, upload: Upload) -> dict:
    """services.upload_head_ranking with a progress bar while it runs (none when the ranking is kept)."""
    kept = services.kept_upload_ranking(model_key, upload.checked.digest)
    if kept is not None:
        return kept
    total = upload.checked.pairs
    bar = st.progress(0.0, text=progress_text(0, total, 0.0))
    start = last = time.monotonic()

    def on_batch(done: int) -> None:
        nonlocal last
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY or done >= total:
            last = now
            bar.progress(min(done / total, 1.0), text=progress_text(done, total, now - start))

    result = services.upload_head_ranking(model_key, upload.data, upload.checked, on_batch)
    bar.empty()
    return result


def main() -> None:
    model_key, engine = page_url.open_page(
        "heads", URL_RULES, "Heads",
        "Which heads matter: the teacher-forced loss when one head alone is switched off (Michel et al. 2019). "
        "Click a head to open it on Explore.",
        {K_DATA: "test", K_N: 50, K_KIND: "all"})
    what, pairs, upload = pairs_ui(model_key)
    if pairs is None:
        page_url.write(URL_RULES, sentence=False)
        return
    key = (model_key, upload.checked.digest if upload else pairs)
    asked = st.session_state.get(K_ASKED) == key
    slot = st.empty()  # the button goes once clicked: clicking it again would start the ranking over
    if not asked and slot.button("Rank every head", key="heads_rank", type="primary"):
        st.session_state[K_ASKED] = key
        asked = True
        slot.empty()
    if not asked:
        batched = f" in batches of {services.HEADS_BATCH} pairs with a progress bar" if upload else ""
        gold = (f"; {upload.checked.gold:,} of them carry gold links, for the roles" if upload and upload.checked.gold
                else "")
        st.caption(f"Switches each head off in turn over {what} ({count_text(engine)}){batched}, teacher forcing "
                   f"as the model was trained{gold}.")
        page_url.write(URL_RULES, sentence=False)
        return
    try:
        if upload is None:
            result = services.head_ranking(model_key, st.session_state[K_N])
            roles = heads_roles.measure(model_key, st.session_state[K_N])
        else:
            ranked = rank_upload(model_key, upload)
            result, roles = ranked["ranking"], ranked["roles"]
    except (ModelInputError, ValueError) as exc:
        st.info(state.text(exc))
        return
    st.markdown(f"Loss with every head on: **{result['base_loss']:.4f}** nats per token on {what}. Each cell: "
                f"how much it rises when that head alone is off (red: the most; the top three are highlighted).")
    name_pairs(what, pairs, upload.checked.pairs if upload else len(pairs))
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
