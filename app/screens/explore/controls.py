"""Explore's controls: the decoding options, the step bar (with autoplay and keyboard), the view picker, the
token chips, and the presenter-mode styling.

View choices live in "keep" keys of session state that no widget owns: Streamlit drops a widget's key on a run
that does not draw the widget (a run that stops on an error), and the browser then sent a stale empty value
back on the next step click ("unknown attention kind None"). Widgets are seeded from the keep keys and copy
valid values back in their on_change callbacks.
"""

from __future__ import annotations

import time

import streamlit as st
from attention_lens.app import services, state
from attention_lens.app.render import bars, views
from attention_lens.app.screens import audio_input
from attention_lens.app.services import DecodeOptions

MODES = {"greedy": "Greedy", "beam": "Beam search", "sample": "Sampling", "teacher_forced": "Teacher forcing"}
KINDS, VIEWS = views.KINDS, views.VIEWS
KIND_SHORT = {"cross_attention": "Cross", "decoder_self_attention": "Decoder",
              "encoder_self_attention": "Encoder"}
VIEW_SHORT = {"grid": "Grid", "layer": "Layer", "head": "Head", "mean": "Mean"}
DEFAULT_VIEW = "grid"  # unless the run is too big for it (explore.fast_view)
K_MODE, K_STEP, K_FORCED, K_RUN = "mode", "step", "forced", "run_key"
K_KIND, K_VIEW, K_LAYER, K_HEAD, K_SCALE, K_BEAM = "kind", "view", "layer", "head", "scale", "beam"
K_KIND_KEEP, K_VIEW_KEEP, K_LAYER_KEEP, K_HEAD_KEEP = "kind_keep", "view_keep", "layer_keep", "head_keep"
K_PRESENT, K_PLAY, K_SPEED, K_LAST_TICK = "present", "playing", "speed", "play_tick"
K_STEP_KEEP = "step_keep"  # the step, kept while another page is open (the slider's own key is dropped)
SPEEDS = [0.5, 1.0, 2.0, 3.0]  # seconds per step
PRESENT_PX = 18  # smallest text in presenter mode

CSS = """<style>
.block-container{padding-top:2.6rem;padding-bottom:1rem}
.block-container h1{font-size:1.5rem;padding:0 0 .2rem 0}
.lens-chips{line-height:2.1em}
.lens-chip{display:inline-block;padding:0 .45em;margin:0 .18em .2em 0;border-radius:.35em;background:#eef2f6;
  font-family:'DejaVu Sans Mono',Menlo,monospace;font-size:.95em;color:#1f2933;border:1px solid #d9e2ec}
.lens-chip.now{background:#d9480f;color:#fff;border-color:#d9480f;font-weight:600}
.lens-chip.read{background:#dbe9f6;border-color:#89bedc}
.lens-chip.forced{border:2px dashed #d9480f}
.lens-chip.special{font-style:italic;color:#7b8794;background:#f5f7fa;border-style:dotted}
.lens-label{color:#52606d;font-size:.85em;margin-right:.4em}
.st-key-server_steps,[data-testid=stLayoutWrapper]:has(> .st-key-server_steps){display:none}
.st-key-server_view,[data-testid=stLayoutWrapper]:has(> .st-key-server_view),[class*=st-key-server_view_notes],
[data-testid=stLayoutWrapper]:has(> [class*=st-key-server_view_notes]){display:none}
@media (min-width:1700px){.block-container{font-size:1.1rem}.lens-chip{font-size:1.05em}}
.st-key-stepbar button{padding-left:.5rem;padding-right:.5rem}
.st-key-stepbar button [data-testid='stMarkdownContainer']{position:absolute;width:1px;height:1px;overflow:hidden;
  clip-path:inset(50%);white-space:nowrap}
""" + bars.CSS + "</style>"
# Presenter mode: no sidebar, everything at least PRESENT_PX.
PRESENT_CSS = f"""<style>
[data-testid='stSidebar'],[data-testid='stSidebarCollapsedControl'],[data-testid='stExpandSidebarButton'],
.block-container [data-testid='stHeading']{{display:none}}
.lens-chip,.lens-label,.lens-topk,[data-testid='stCaptionContainer'],[data-testid='stMarkdownContainer'] p,
[data-testid='stWidgetLabel'] p,.stButton p,[data-testid='stSegmentedControl'] p,[data-baseweb='select'] div,
[data-testid='stPopover'] button p{{font-size:{PRESENT_PX}px !important}}
[data-baseweb='select'] > div{{min-height:2.8rem}}
[data-testid='stSegmentedControl'] button,.stButton button{{min-height:2.8rem}}
[data-testid='stTextInput'] input,[data-testid='stTextArea'] textarea,[data-baseweb='select'] input,
[data-testid='stSelectbox'] input,[role='listbox'] [role='option']{{
  font-size:{PRESENT_PX}px !important}}
@media (min-width:1700px){{
.lens-chip,.lens-label,[data-testid='stCaptionContainer'],[data-testid='stMarkdownContainer'] p,
[data-testid='stWidgetLabel'] p,.stButton p,[data-testid='stSegmentedControl'] p,[data-baseweb='select'] div,
[data-testid='stPopover'] button p,[data-testid='stTextInput'] input,[data-testid='stTextArea'] textarea,
[data-testid='stSelectbox'] input,[role='listbox'] [role='option']{{
  font-size:{PRESENT_PX + 4}px !important}}}}
</style>"""

def style(present: bool) -> None:
    """The page's CSS. The step's keys (arrows, Home, End, space) are the stepper component's own
    (app/render/stepper/stepper.js): one listener for the page, set up once, never a script re-run on the page."""
    st.markdown(CSS + (PRESENT_CSS if present else ""), unsafe_allow_html=True)


def chips(tokens, now: int | None = None, cls: str = "", forced: int = 0, special: frozenset[str] = frozenset()) -> str:
    """Tokens as chips; `special` pieces (pad, end, decoder start, language codes) are drawn dotted and titled so.
    Every token goes through state.text, so a token is always shown as text, never as markup."""
    out = []
    for i, t in enumerate(tokens):
        c = "lens-chip" + (" now" if i == now else f" {cls}" if cls else "") + (" forced" if i < forced else "")
        c += " special" if t in special else ""
        title = f"position {i}" + (" · special token" if t in special else "")
        out.append(f"<span class='{c}' title='{title}'>{state.text(t)}</span>")
    return "<span class='lens-chips'>" + "".join(out) + "</span>"


def _pick(widget_key: str, shared_key: str) -> None:
    st.session_state[shared_key] = st.session_state[widget_key]


def present_menu(container, model_key: str) -> None:
    """Presenter mode hides the sidebar: its model and decoding mode, in a popover on the page instead (their
    own keys, copied into the sidebar's widgets' keys by callbacks, which run before the sidebar is drawn)."""
    from attention_lens.app import registry  # the model list; this module is otherwise free of it

    keys = list(dict.fromkeys([model_key, *(e.key for e in registry.entries())]))
    titles = {e.key: e.title for e in registry.entries()}
    # the box names each model as the sidebar's does (a title with its description was cut at the popover's
    # width); the chosen model's description goes under it
    names = {k: t.split(" · ")[0] for k, t in titles.items()}
    with container.popover("Model & mode", icon=":material/tune:", width="stretch"):
        st.session_state["present_model"], st.session_state["present_mode"] = model_key, st.session_state[K_MODE]
        st.selectbox("Model", keys, key="present_model", format_func=lambda k: names.get(k, k),
                     on_change=_pick, args=("present_model", state.K_MODEL))
        if " · " in titles.get(model_key, ""):
            st.caption(state.text(titles[model_key].split(" · ", 1)[1]))
        st.radio("Mode", list(MODES), key="present_mode", format_func=MODES.get, on_change=_pick,
                 args=("present_mode", K_MODE))


# ---- sidebar: decoding options ----------------------------------------------------------------------------
K_SRC_LANG, K_TGT_LANG = "src_lang", "tgt_lang"


def language_ui(sb, engine) -> dict[str, str]:
    """A multilingual model's source and target language (its own codes: NLLB `fra_Latn`, M2M-100 `fr`, mBART-50
    `fr_XX`), two select boxes, as DecodeOptions fields; nothing (and no stale choice) for any other model."""
    ss = st.session_state
    codes = list(engine.languages())
    if not codes:
        ss.pop(K_SRC_LANG, None)
        ss.pop(K_TGT_LANG, None)
        return {}
    kw = {}
    for key, label, default, helptext in (
            (K_SRC_LANG, "Source language", engine.src_lang, "the language code the tokenizer puts on the source"),
            (K_TGT_LANG, "Target language", engine.tgt_lang, "forced as the first token the decoder writes")):
        if ss.get(key) not in codes:  # a link's code this model lacks, or another model's: the model's own
            ss[key] = default if default in codes else codes[0]
        kw[key] = sb.selectbox(label, codes, key=key, help=f"This model is multilingual: {helptext}.")
    return kw


# The sidebar's decoding choices, kept in plain session state: Streamlit drops a widget's key while a page that
# does not draw it runs, and Explore would come back to greedy search from any other page.
K_DECODING_KEEP = "decoding_keep"
DECODING_KEYS = (K_MODE, "beam_size", "temperature", "sample_top_k", "seed")


def _restore_decoding() -> None:
    """The kept choices back into their widgets' keys, where nothing (a link, this page's run) set them."""
    for key, value in st.session_state.get(K_DECODING_KEEP, {}).items():
        if key not in st.session_state:
            st.session_state[key] = value


def decoding_ui(engine=None) -> DecodeOptions:
    sb = st.sidebar
    sb.subheader("Decoding")
    _restore_decoding()
    languages = {} if engine is None else (audio_input.speech_options_ui(sb, engine) if services.is_speech(engine)
                                            else language_ui(sb, engine))
    if st.session_state.get(K_MODE) not in MODES:
        st.session_state[K_MODE] = "greedy"
    mode = sb.radio("Mode", list(MODES), key=K_MODE, format_func=MODES.get,
                    help="Generate lets the model write its own translation; teacher forcing feeds it the "
                         "reference, one token per row, as in training.")
    kw = {"mode": mode}
    if mode == "beam":
        kw["beam_size"] = sb.slider("Beam width K", 1, 8, key="beam_size", **_default("beam_size", 4))
    elif mode == "sample":
        kw["temperature"] = sb.slider("Temperature", 0.1, 2.0, step=0.1, key="temperature",
                                      **_default("temperature", 1.0))
        kw["top_k"] = sb.number_input("Top-k (0 = all tokens)", 0, 100, key="sample_top_k",
                                      **_default("sample_top_k", 0))
        kw["seed"] = sb.number_input("Seed", 0, 10_000, key="seed", **_default("seed", 0))
    st.session_state[K_DECODING_KEEP] = {k: st.session_state[k] for k in DECODING_KEYS if k in st.session_state}
    return DecodeOptions(**kw, **languages)


def _default(key: str, value) -> dict:
    """A widget's default, unless session state (a link) already holds its value."""
    return {} if key in st.session_state else {"value": value}


# ---- view picker ----------------------------------------------------------------------------------------------
SCALE_NAMES = {"fixed": "Colours 0 – 1", "stretch": "Colours 0 – max"}
SCALE_LABEL = ("Colour scale of the attention picture: 0 – 1, every weight on the same fixed scale, or 0 – max, "
               "the colours stretched to the largest weight shown")
def _copy(widget_key: str, keep_key: str, allowed) -> None:
    if st.session_state.get(widget_key) in allowed:
        st.session_state[keep_key] = st.session_state[widget_key]


def _seed(widget_key: str, keep_key: str, allowed, default):
    """The kept value (or default) into the widget's key before the widget is drawn; returns it."""
    value = st.session_state.get(keep_key)
    if value not in allowed:
        value = st.session_state[keep_key] = default
    st.session_state[widget_key] = value
    return value


def view_ui(engine, cols, scale_disabled: bool = False) -> tuple[str, str, int, int, str]:
    """Attention kind, head view, layer, head and colour scale into the given columns (5); the scale box greyed
    (its value kept) while no attention is on screen."""
    kind = _seed(K_KIND, K_KIND_KEEP, KINDS, "cross_attention")
    cols[0].segmented_control("Attention", list(KINDS), key=K_KIND, format_func=KIND_SHORT.get, required=True,
                              label_visibility="collapsed",
                              on_change=_copy, args=(K_KIND, K_KIND_KEEP, KINDS),
                              help="Cross: decoder rows over source tokens. Decoder self: over the target "
                                   "prefix (masked future hatched). Encoder self: source over source.")
    view = _seed(K_VIEW, K_VIEW_KEEP, VIEWS, DEFAULT_VIEW)
    cols[1].segmented_control("Heads", list(VIEWS), key=K_VIEW, format_func=VIEW_SHORT.get, required=True,
                              label_visibility="collapsed",
                              on_change=_copy, args=(K_VIEW, K_VIEW_KEEP, VIEWS),
                              help="Grid: every layer × head. Layer: the heads of one layer. One head: a single "
                                   "map, large. Mean: over heads. The stepper's Heads button picks any of them.")
    n_layers = engine.n_encoder_layers if kind == "encoder_self_attention" else engine.n_decoder_layers
    layers, heads = range(n_layers), range(engine.n_heads)
    layer = _seed(K_LAYER, K_LAYER_KEEP, layers, 0)
    cols[2].selectbox("Layer", layers, key=K_LAYER, format_func=lambda i: f"L{i + 1}",
                      disabled=view not in ("head", "layer"),
                      label_visibility="collapsed", on_change=_copy, args=(K_LAYER, K_LAYER_KEEP, layers))
    head = _seed(K_HEAD, K_HEAD_KEEP, heads, 0)
    cols[3].selectbox("Head", heads, key=K_HEAD, format_func=lambda i: f"H{i + 1}", disabled=view != "head",
                      label_visibility="collapsed", on_change=_copy, args=(K_HEAD, K_HEAD_KEEP, heads))
    # its label is collapsed (a label over one box of the row would put it out of line): the value says what it
    # scales, and the label (a screen reader's name for the box) says both choices
    scale = cols[4].selectbox(SCALE_LABEL, ["fixed", "stretch"], key=K_SCALE, label_visibility="collapsed",
                              format_func=SCALE_NAMES.get, disabled=scale_disabled)
    return kind, view, layer, head, scale


# ---- step bar -------------------------------------------------------------------------------------------------
def _set_step(value: int, m: int) -> None:
    st.session_state[K_STEP] = max(1, min(m, value))
    st.session_state[K_PLAY] = False


def _toggle_play(m: int) -> None:
    playing = not st.session_state.get(K_PLAY)
    if playing and st.session_state.get(K_STEP, 1) >= m:
        st.session_state[K_STEP] = 1
    st.session_state[K_PLAY] = playing
    st.session_state[K_LAST_TICK] = 0.0


def step_bar(m: int) -> int:
    """First / back / next / last / play, speed and a slider in one compact row; returns the step (1..m)."""
    step = max(1, min(m, st.session_state.get(K_STEP, st.session_state.get(K_STEP_KEEP, 1))))
    st.session_state[K_STEP] = st.session_state[K_STEP_KEEP] = step
    playing = bool(st.session_state.get(K_PLAY))
    bar = st.container(key="stepbar")
    cols = bar.columns([0.75, 0.75, 0.9, 0.75, 0.75, 1.15, 3.6], vertical_alignment="center", gap="small")
    # Each button's name is words, not its icon's ligature ("chevron_right" to a screen reader): shown to screen
    # readers and hidden on screen by CSS (.lens-sr), the icon drawn beside it.
    buttons = [("reset", "First step", ":material/first_page:", 1, step <= 1),
               ("back", "Back one step", ":material/chevron_left:", step - 1, step <= 1),
               ("next", "Next step", ":material/chevron_right:", step + 1, step >= m),
               ("end", "Last step", ":material/last_page:", m, step >= m)]
    for col, (key, name, icon, target, off) in zip(cols, buttons):
        col.button(name, icon=icon, key=key, on_click=_set_step, args=(target, m), disabled=off, width="stretch",
                   type="primary" if key == "next" else "secondary")
    cols[4].button("Pause" if playing else "Play", icon=":material/pause:" if playing else ":material/play_arrow:",
                   key="play", width="stretch", on_click=_toggle_play, args=(m,), disabled=m <= 1)
    if K_SPEED not in st.session_state:
        st.session_state[K_SPEED] = 1.0
    cols[5].selectbox("Speed", SPEEDS, key=K_SPEED, format_func=lambda s: f"{s:g} s", label_visibility="collapsed",
                      help="Seconds per step while playing")
    if m > 1:
        cols[6].slider("Step", 1, m, key=K_STEP, label_visibility="collapsed", on_change=_stop_play)
    else:
        cols[6].caption("This run has a single step.")
    st.session_state[K_STEP_KEEP] = st.session_state[K_STEP]
    return st.session_state[K_STEP]


def _stop_play() -> None:
    st.session_state[K_PLAY] = False


def tick(m: int) -> None:
    """While playing, one step per period of the fragment's run_every; at the last step playing stops."""
    if not st.session_state.get(K_PLAY):
        return
    now = time.monotonic()
    if now - st.session_state.get(K_LAST_TICK, 0.0) < 0.8 * st.session_state.get(K_SPEED, 1.0):
        return
    st.session_state[K_LAST_TICK] = now
    step = st.session_state.get(K_STEP, 1)
    if step >= m:
        st.session_state[K_PLAY] = False
        st.rerun(scope="app")  # the fragment stops re-running itself
    st.session_state[K_STEP] = step + 1
