"""Alignment: which source word each target word's cross-attention points at, drawn as links and scored
against gold links; and a table ranking every head by its alignment error rate on the test split.

Compute lives in model/analysis/alignment (merging pieces into words, readings, extraction, AER), figures in
app/render/alignment.py and alignment_svg.py; this file only lays them out.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import alignment as af
from attention_lens.app.render import alignment_svg as svg
from attention_lens.app.screens import charts, guided_alignment, page_url
from attention_lens.app.screens.alignment_upload import upload_view
from attention_lens.app.screens.explore.panels import ask_for_reference
from attention_lens.app.screens.timing import timing_view
from attention_lens.app.services import CheckpointError, DecodeOptions, ModelInputError
from attention_lens.app.services import alignment as al

DATA = state.ROOT / "assets" / "data"
READINGS = {"plain": "Plain (row that predicts the word)", "shift": "Shift-aware (row where the word is the input)"}
EXTRACTS = {"argmax": "Argmax (best source word per target word)", "threshold": "Threshold (every weight ≥ τ)",
            "inter": "Intersection (best both ways)", "union": "Union (best either way)"}
MEAN = 0  # the "all layers" / "mean over heads" choice in the layer and head boxes
K_READING, K_EXTRACT, K_TAU = "align_reading", "align_extract", "align_tau"
K_LAYER, K_HEAD = "align_layer", "align_head"
K_GOLD, K_N, K_TABLE_SEL = "align_gold", "align_n", "align_table_selectors"
ERRORS = (ModelInputError, CheckpointError, ValueError, OSError)

CAPTIONS = {
    "links": "Each line joins a target word (bottom) to the source word its cross-attention points at; green is "
             "a gold link found, red a link the gold does not have, grey dots a sure gold link missed.",
    "matrix": "The same head at word level: a row is a target word, its cells how much attention each source "
              "word received (pieces summed); dots are the extracted links, orange squares the gold.",
    "table": "Every cross-attention head scored on the first sentences of the test split: a low AER means the "
             "head, read as an alignment, agrees with the gold links; usually only a few heads align well.",
}


def _matrix_name(method: al.Method) -> str:
    if method.layer is None:
        return "mean of all heads"
    return f"layer {method.layer} mean" if method.head is None else f"layer {method.layer} · head {method.head}"


# ---- cached compute ---------------------------------------------------------------------------------------
def head_scores(model_key: str, data_file: str, n: int) -> tuple[pd.DataFrame, int, list[str]]:
    """AER / precision / recall of every method (extraction x reading x head / layer mean / mean) on the
    first n sentences of a gold TSV: (table, sentences scored, reasons for the first skipped ones)."""
    report = services.alignment_report(model_key, data_file, n)
    if report.tally is None:
        return pd.DataFrame(), 0, [r for _, r in report.skipped[:3]]
    records = []
    for method in report.tally.methods:
        c = report.tally[method]
        records.append({"method": method.name, "matrix": _matrix_name(method), "extract": method.extract,
                        "reading": method.reading,
                        "threshold": method.threshold if method.extract == "threshold" else None,
                        "layer": method.layer, "head": method.head, "AER": c.aer, "precision": c.precision,
                        "recall": c.recall})
    return pd.DataFrame(records), report.tally.n, [r for _, r in report.skipped[:3]]


# ---- widgets ----------------------------------------------------------------------------------------------
def _init(key: str, value) -> None:
    if key not in st.session_state:
        st.session_state[key] = value


def method_ui(engine) -> al.Method:
    """Reading, layer, head, extraction and threshold -> a Method."""
    default = al.Method.parse(al.DEFAULT_METHOD)
    _init(K_READING, default.reading)
    _init(K_EXTRACT, default.extract)
    _init(K_TAU, al.DEFAULT_THRESHOLD)
    _init(K_LAYER, MEAN)
    _init(K_HEAD, MEAN)
    cols = st.columns([3, 1.1, 1.1, 2.2, 1.2], vertical_alignment="bottom")
    # select boxes, not a radio or segmented control: each new kind of widget is more code a new visitor's
    # browser loads before the page shows
    reading = cols[0].selectbox("Reading of a decoder row", list(READINGS), key=K_READING, format_func=READINGS.get,
                            help="Chen et al. (2020): the attention at the step where a word is the decoder's "
                                 "input often aligns better than at the step that predicts it.")
    if st.session_state[K_LAYER] > engine.n_decoder_layers:
        st.session_state[K_LAYER] = MEAN
    if st.session_state[K_HEAD] > engine.n_heads:
        st.session_state[K_HEAD] = MEAN
    layer = cols[1].selectbox("Layer", range(engine.n_decoder_layers + 1), key=K_LAYER,
                              format_func=lambda i: "mean" if i == MEAN else str(i))  # "all (mean)" was cut at 1366
    head = cols[2].selectbox("Head", range(engine.n_heads + 1), key=K_HEAD, disabled=layer == MEAN,
                             format_func=lambda i: "mean" if i == MEAN else str(i))
    extract = cols[3].selectbox("Extraction", list(EXTRACTS), key=K_EXTRACT, format_func=EXTRACTS.get)
    tau = cols[4].selectbox("Threshold τ", list(al.SEARCH_THRESHOLDS), key=K_TAU,
                            disabled=extract != "threshold")
    return al.Method(extract, reading, layer or None, (head or None) if layer else None, tau)


def use_method(method: al.Method) -> None:
    """Set the extraction, reading and threshold widgets to `method`'s (a widget callback: before they render)."""
    st.session_state[K_READING] = method.reading
    st.session_state[K_EXTRACT] = method.extract
    if method.extract == "threshold" and method.threshold in al.SEARCH_THRESHOLDS:
        st.session_state[K_TAU] = method.threshold


def gold_ui(chosen: dict | None) -> str:
    """The preset's gold links, or links the user types (Pharaoh, optional)."""
    if chosen is not None and chosen.get("gold"):
        st.caption(f"Gold links from the example: `{chosen['gold']}` (`i-j` sure, `i?j` possible; source first).")
        return chosen["gold"]
    return st.text_input("Gold links (optional)", key=K_GOLD, placeholder="0-0 1-1 2?2 2-3",
                         help="Pharaoh format over the whitespace words of the normalised sentences: `i-j` sure, "
                              "`i?j` possible, 0-based, source index first.")


# ---- views ------------------------------------------------------------------------------------------------
def sentence_view(model_key: str, engine, source: str, target: str, gold_text: str, method: al.Method) -> None:
    if not target.strip():
        ask_for_reference(model_key, source, "Type a reference target: alignment reads the cross-attention of "
                          "teacher forcing on it.", "align_use_own")
        return
    causal, shift = engine.trained_setting
    trace = state.shown_trace(model_key, source, target, DecodeOptions(mode="teacher_forced", causal=causal,
                                                                       shift=shift), ERRORS)
    if trace is None:
        return
    try:
        wa = al.trace_word_attention(trace, engine.normalise_target(target).split(), al.engine_specials(engine))
    except ERRORS as exc:
        st.error(str(exc))
        return
    src, tgt = wa.source_words, wa.target_words
    sure = possible = None
    if gold_text.strip():
        try:
            gold = al.parse_pharaoh(gold_text)
            gold.check(len(src), len(tgt))
            sure, possible = gold.sure, gold.possible
        except ValueError as exc:
            st.warning(f"Gold links ignored: {state.text(exc)}")
    weights = wa.matrix(method.reading, method.layer, method.head)
    links = method.links(wa)
    left, right = st.columns([3, 3], vertical_alignment="center")
    if sure is not None:
        r = al.scores(links, al.Gold(frozenset(sure), frozenset(possible)))
        left.container(key="align_scores").html(af.scores_html([
            ("AER", f"{r['aer']:.2f}", "Alignment error rate (Och & Ney 2003): 0 is perfect."),
            ("Precision", f"{r['precision']:.0%}", "Predicted links that are sure or possible gold."),
            ("Recall", f"{r['recall']:.0%}", "Sure gold links that were predicted.")]))
    else:
        left.caption("No gold links for this sentence: links only.")
    right.markdown(f"Method `{method.name}` · links {links_code(al.format_pharaoh(links))}", unsafe_allow_html=True)
    charts.svg(svg.links_svg(src, tgt, links, sure, possible, weights=weights,
                             title=f"Links · {method.selector} · {method.reading} reading"), "align_links")
    st.caption(CAPTIONS["links"])
    with st.expander("Word-level attention under the links", expanded=True):  # an expander's code is loaded already
        charts.svg(svg.matrix_svg(weights, src, tgt, links, sure, possible, title=f"Word-level cross-attention · "
                                  f"{method.selector} · {method.reading} reading"), "align_matrix")
        st.caption(CAPTIONS["matrix"])


def links_code(pharaoh: str) -> str:
    """Pharaoh links as inline code that wraps between links, never inside one (the browser broke "5-6" into
    "5-" and "6" at the line's end); copied, it reads as the links separated by spaces."""
    if not pharaoh:
        return "`(none)`"
    return "<code>" + " ".join(f"<span style='white-space: nowrap'>{state.text(link)}</span>"
                               for link in pharaoh.split()) + "</code>"


def table_view(model_key: str, engine, method: al.Method) -> None:
    pair = engine.card.get("pair")
    if state.text_kind(engine.card) == "raw":  # the gold splits are the grammar corpora's, not typed text
        st.info("No gold test split ships for real text (gold links need people to write them). The README's "
                "Hansards table scores this model's heads on 447 human-aligned English–French sentences "
                "(`reports/hansards_aer.py`); rank its heads on your own file with gold links in “Your test "
                "file” above, or with `python -m model align --model … --data FILE.tsv`.")
        return
    data = DATA / f"{pair}.test.tsv" if pair else None
    if data is None or not data.is_file():
        st.info("No gold test split ships for this model's language pair: rank its heads on your own file with "
                "gold links in “Your test file” above (or `python -m model align --model … --data FILE.tsv`).")
        return
    _init(K_N, al.CARD_HEADS_N)  # the default: the tally kept in the card (model.analysis.alignment.card)
    n = st.selectbox("Sentences of the test split", range(20, 501, 20), key=K_N, width=260,
                      help="The first N sentences of assets/data/" + data.name + "; more is slower but steadier.")
    try:
        table, scored, skipped = head_scores(model_key, str(data), n)
    except ERRORS as exc:
        st.error(f"Cannot score this model on {data.name}: {exc}")
        return
    if table.empty:
        st.error("No sentence of the test split could be aligned with this model"
                 + (f": {skipped[0]}" if skipped else "."))
        return
    same = (table["extract"] == method.extract) & (table["reading"] == method.reading)
    if method.extract == "threshold":
        same &= np.isclose(table["threshold"].fillna(-1), method.threshold)
    rows = table[same]
    heads = rows[rows["head"].notna()]
    grid = np.full((engine.n_decoder_layers, engine.n_heads), np.nan)
    for r in heads.itertuples():
        grid[int(r.layer) - 1, int(r.head) - 1] = r.AER
    best = table.loc[table["AER"].idxmin()]
    st.markdown(f"Scored on **{scored}** sentences of `{data.name}`"
                + (f" ({n - scored} skipped)" if scored < n else "") + f". Lowest AER of any method here: "
                f"`{best['method']}` at **{best['AER']:.3f}** (chosen on these same sentences, so optimistic).")
    left, right = st.columns([2, 3], gap="large")
    # plain HTML tables (st.html): no chart, data grid or Arrow table whose code the browser would load
    left.container(key="align_head_grid").html(
        af.head_aer_html(grid, title=f"AER per head · {method.extract} · {method.reading}"))
    _init(K_TABLE_SEL, "all")
    which = right.selectbox("Rows", ["all", "heads", "layer means"], key=K_TABLE_SEL, width=260)
    shown = rows if which == "all" else heads if which == "heads" else rows[rows["head"].isna()]
    right.container(key="align_table").html(
        af.ranking_html(shown.sort_values("AER")[["matrix", "method", "AER", "precision", "recall"]], height_px=360))
    st.caption(CAPTIONS["table"])


# ---- page -------------------------------------------------------------------------------------------------
# The page's link parameters besides model, text and target (app/screens/page_url.py); layer / head 0 = mean
URL_RULES = {"reading": (K_READING, page_url.one_of(tuple(READINGS)), str),
             "extract": (K_EXTRACT, page_url.one_of(tuple(EXTRACTS)), str),
             "layer": (K_LAYER, page_url.number_in(range(65)), str),
             "head": (K_HEAD, page_url.number_in(range(65)), str),
             "tau": (K_TAU, page_url.number_in(tuple(al.SEARCH_THRESHOLDS), float), str),
             "gold": (K_GOLD, str, str)}  # the links typed in the gold box (a preset's own are not a rule's)


def main() -> None:
    model_key, engine = page_url.open_page(
        "alignment", URL_RULES, "Alignment",
        "Read cross-attention as a word alignment, and score it head by head against gold links.")
    if services.is_speech(engine):  # a speech model's words are timed, not linked (app/screens/timing.py)
        timing_view(model_key, engine)
        page_url.write(URL_RULES)
        return
    source, _, chosen = state.text_inputs(engine)
    target = state.target_input()
    gold_text = gold_ui(chosen)
    guided_alignment.alignment_box(engine, K_READING, K_EXTRACT, K_TAU, K_LAYER, K_HEAD)  # its supervised head
    method = method_ui(engine)
    st.divider()
    sentence_view(model_key, engine, source, target, gold_text, method)
    st.divider()
    upload_view(model_key, engine, method, use_method)
    st.divider()
    st.subheader("Which heads align?")
    table_view(model_key, engine, method)
    page_url.write(URL_RULES)


main()
