"""A guided tour for a lesson, entered from Explore: prepared states, each with a sentence or two and Back /
Next. A stop is a set of link parameters (explore.url.apply puts them into the page) or, for the Leakage lab,
that page's switches and a link to it."""

from __future__ import annotations

import json

import streamlit as st
from attention_lens.app.screens.explore import url

K_TOUR = "tour_stop"
K_MOVED = "tour_moves"  # how many times a tour button was pressed in this session
# The stop's box stays at the top of the screen (sticky, under Streamlit's header) while the page scrolls, and on
# Explore each Back / Next scrolls the page once, when its run is over, so that the picture sits just under the
# box: at 1366 x 768 the inputs, step bar and view pickers above it left most of the map below the fold (the
# causal-mask stop, with its reference row, the most). Streamlit has no scroll call: a script of the page's own.
STYLE = """<style>[data-testid=stLayoutWrapper]:has(> .st-key-tour) {position: sticky; top: 3.75rem; z-index: 99;}
.st-key-tour_js, [data-testid=stLayoutWrapper]:has(> .st-key-tour_js) {display: none;}</style>"""
SCROLL_JS = """<script>(() => {
const doc = window.parent.document, win = window.parent, move = %s, anchor = %s;
const app = () => doc.querySelector('[data-testid=stApp]');
const began = Date.now();
let since = null, fixed = 0;  // when the run ended and the following began; when the chart was last moved
const mine = () => { since = -1; };  // the reader scrolls, types or clicks: the page is theirs from then on
const EVENTS = ['wheel', 'touchstart', 'keydown', 'mousedown'];
const stop = () => { clearInterval(timer); for (const e of EVENTS) doc.removeEventListener(e, mine); };
window.addEventListener('pagehide', stop);  // a rerun that replaces this frame
const timer = setInterval(() => {
  const box = doc.querySelector('.st-key-tour'), chart = anchor && doc.querySelector(anchor);
  // A first run on a cold server (a model to load, the run to compute, a loaded machine) can last well past 20 s:
  // wait two minutes for it to end before giving up.
  if (Date.now() - began > 120000 || since === -1) { stop(); return; }
  if (!app() || app().getAttribute('data-test-script-state') !== 'notRunning' || !box) return;
  box.style.background = getComputedStyle(app()).backgroundColor;  // opaque over what scrolls under it
  if (since === null) {
    if (!chart || win.lensTourMove === move) { stop(); return; }  // once per press, not every rerun
    win.lensTourMove = move;
    since = fixed = Date.now();
    for (const e of EVENTS) doc.addEventListener(e, mine);
  }
  // The picture is drawn after the run ends: until then the page may be too short to scroll that far, and a
  // panel drawn above moves the chart down. Keep it under the box until it has stayed there for a second and a
  // half (ten seconds at most).
  const main = doc.querySelector('[data-testid=stMain]');
  const under = main.getBoundingClientRect().top + parseFloat(getComputedStyle(box.parentElement).top || '0')
    + box.offsetHeight + 8;
  const by = chart.getBoundingClientRect().top - under;
  if (Math.abs(by) > 4) { main.scrollBy({top: by, behavior: 'instant'}); fixed = Date.now(); }
  if (Date.now() - fixed > 1500 || Date.now() - since > 10000) stop();
}, 100);
})();</script>"""
LEAKAGE_PAGE, EXPLORE_PAGE = "screens/leakage_lab.py", "screens/explore/page.py"
# The Leakage lab stops' model and sentence, set by the stop itself: reached with another model in the sidebar (it
# was changed mid-tour, or the tour was entered at a later stop) the lab showed that model's trio under a text
# about en-fr's
LAB_SENTENCE = {"model": "en-fr", "preset": "custom", "source": "the cat sat .", "target": "le chat s' assit ."}
STOPS = [
    {"title": "Which word resolves 'bank'?",
     "text": "Encoder self-attention, layer 1 head 3: the row of 'bank' puts almost all of its weight (0.99) on "
             "'river'. That is how the encoder knows this bank is a river bank before any French is written.",
     "params": {"model": "en-fr", "text": "the dog sat near the bank of the river .", "mode": "greedy", "kind": "enc",
                "view": "head", "layer": "1", "head": "3", "step": "1"}},
    {"title": "The cross-attention diagonal",
     "text": "Each French word looks back at the English word it translates, so the bright cells run down the "
             "diagonal. Press → to watch it grow one row per step.",
     "params": {"model": "en-fr", "text": "the cat sat .", "mode": "greedy", "kind": "cross", "view": "grid",
                "step": "1"}},
    {"title": "Reordering in German → English",
     "text": "German puts the verb at the end of the clause: the English 'chased' and 'barked' reach forward to "
             "'jagte' and 'bellte', and the diagonal breaks.",
     "params": {"model": "de-en", "text": "Der Hund, den die Katze jagte, bellte.", "mode": "greedy",
                "kind": "cross", "view": "mean", "step": "99"}},
    {"title": "The causal mask, drawn as a mask",
     "text": "Teacher forcing feeds the whole reference at once; the hatched grey cells are the future positions "
             "each row is not allowed to see. White cells were visible but got no weight.",
     "params": {"model": "en-fr", "text": "the cat sat .", "target": "le chat s' assit .",
                "mode": "teacher_forced", "kind": "dec", "view": "head", "layer": "1", "head": "1", "step": "99"}},
    {"title": "Leakage lab: mask and shift off", "anchor": ".st-key-leak_heatmap",
     "text": "Switch off the causal mask and the right shift and the decoder can read the very token it must "
             "predict: it copies it, and the accuracy becomes meaningless.",
     "leakage": {"leak_view": "switches", "leak_causal": False, "leak_shift": False, **LAB_SENTENCE}},
    {"title": "The broken models", "anchor": ".st-key-leak_curves",
     "text": "Beside the healthy en-fr, two models were trained with the mask or the shift missing. Fed their own "
             "training setting they look perfect; decoding for real, one token at a time, they fall apart. "
             "(en-fr-no-scaling, when shown, was trained without the 1/√d_k scaling and still translates.)",
     "leakage": {"leak_view": "broken", **LAB_SENTENCE}},
    {"title": "Training against inference", "anchor": ".st-key-exp_pair",
     "text": "The healthy model, once fed the reference (training) and once its own choices (inference): the rows "
             "are equal while the two prefixes agree. At step 2 it writes 'chat' where the reference says "
             "'chien', and from step 3 on the two pictures part: inference reads what training never showed it.",
     "leakage": {"leak_view": "exposure", "leak_causal": True, "leak_shift": True, "model": "en-fr",
                 "preset": "custom", "source": "the cat sat .", "target": "le chien s' assit ."}},
    {"title": "The key-value cache", "anchor": ".st-key-kv_open",  # the panel, scrolled under the box
     "text": "Each step computes one new key and value per layer and reuses all earlier ones; the source's are "
             "computed once. Step on with → and watch the cache grow, and the work a recompute would cost.",
     "params": {"model": "en-fr", "text": "the black cat sat on the mat .", "mode": "greedy", "kind": "dec",
                "view": "mean", "step": "4"},
     "state": {"kv_open": True}},
]


def go(i: int) -> None:
    """Open stop i (callbacks only: they run before the page is drawn)."""
    st.session_state[K_TOUR] = i
    st.session_state[K_MOVED] = st.session_state.get(K_MOVED, 0) + 1  # the page scrolls to the picture once
    stop = STOPS[i]
    if "params" in stop:
        st.session_state[url.K_NOTICES] = url.apply(stop["params"])
    for key, value in (stop.get("leakage", {}) | stop.get("state", {})).items():
        st.session_state[key] = value


def leave() -> None:
    st.session_state.pop(K_TOUR, None)


def start_button(container) -> None:
    container.button(":material/school: Tour", key="tour_start", on_click=go, args=(0,), width="stretch")


def panel(page: str = EXPLORE_PAGE) -> None:
    """The current stop's explanation and Back / Next (nothing when no tour is on), on `page`; a stop that is
    shown on the other page (a Leakage lab stop seen from Explore, or back) opens that page, so every stop
    shows what it describes."""
    i = st.session_state.get(K_TOUR)
    if i is None:
        return
    stop = STOPS[i]
    if (LEAKAGE_PAGE if "leakage" in stop else EXPLORE_PAGE) != page:
        st.switch_page(LEAKAGE_PAGE if "leakage" in stop else EXPLORE_PAGE)
    box = st.container(border=True, key="tour")
    cols = box.columns([8, 1, 1, 1], vertical_alignment="center")
    cols[0].markdown(f"**Tour {i + 1}/{len(STOPS)} · {stop['title']}** {stop['text']}")
    cols[1].button(":material/arrow_back:", key="tour_back", on_click=go, args=(i - 1,),
                   disabled=i == 0, width="stretch")
    cols[2].button(":material/arrow_forward:", key="tour_next", on_click=go, args=(i + 1,),
                   disabled=i == len(STOPS) - 1, width="stretch")
    cols[3].button(":material/close:", key="tour_end", on_click=leave, width="stretch")
    # the picture the stop speaks of, scrolled under the box: Explore's attention picture, or the Leakage lab's chart
    # (the copying diagonal, the loss curves, the diverging rows were below the fold)
    anchor = stop.get("anchor", ".st-key-attention" if page == EXPLORE_PAGE else None)
    script = SCROLL_JS % (int(st.session_state.get(K_MOVED, 0)), json.dumps(anchor))
    st.container(key="tour_js").html(STYLE + script, unsafe_allow_javascript=True)
