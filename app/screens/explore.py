"""Explore: type a sentence, step through the decoding token by token, and see every attention map.

The run is decoded once per (model, input, options) and cached (services.get_trace); the step controls only
choose how many of its rows to reveal, so a click never re-encodes or re-decodes.
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st

from app import exports, services, state
from app.render import figures, views
from app.screens import vocabulary
from app.services import CheckpointError, DecodeOptions, ModelInputError

MODES = {"greedy": "Greedy", "beam": "Beam search", "sample": "Sampling", "teacher_forced": "Teacher forcing"}
KINDS, VIEWS = views.KINDS, views.VIEWS
CAPTIONS = {
    "cross_attention": "Cross-attention: each row is one decoder step, and shows how strongly it looked at each "
                       "source token while choosing its output, so the brightest cell is roughly the word it was "
                       "translating.",
    "decoder_self_attention": "Decoder self-attention: each row reads the token on the left of the arrow and "
                              "predicts the one on the right; grey hatched cells are future positions hidden by "
                              "the causal mask, white cells were visible but got no weight.",
    "encoder_self_attention": "Encoder self-attention: every source token looks at every other one (no mask); this "
                              "is how a word such as 'bank' picks up its context before any translating starts.",
}
K_MODE, K_STEP, K_FORCED, K_RUN = "mode", "step", "forced", "run_key"
K_KIND, K_VIEW, K_LAYER, K_HEAD, K_SCALE, K_BEAM = "kind", "view", "layer", "head", "scale", "beam"

CSS = """<style>
.block-container{padding-top:2.2rem}
.lens-chips{line-height:2.2em}
.lens-chip{display:inline-block;padding:0 .45em;margin:0 .18em .2em 0;border-radius:.35em;background:#eef2f6;
  font-family:'DejaVu Sans Mono',Menlo,monospace;font-size:.95em;color:#1f2933;border:1px solid #d9e2ec}
.lens-chip.now{background:#d9480f;color:#fff;border-color:#d9480f;font-weight:600}
.lens-chip.read{background:#dbe9f6;border-color:#89bedc}
.lens-chip.forced{border:2px dashed #d9480f}
.lens-chip.special{font-style:italic;color:#7b8794;background:#f5f7fa;border-style:dotted}
.lens-label{color:#52606d;font-size:.85em;margin-right:.4em}
</style>"""


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


def joined(tokens) -> str:
    """Pieces back to text for reading along (special tokens dropped)."""
    return "".join(t for t in tokens if not (t.startswith("<") and t.endswith(">"))).replace("▁", " ").strip()


# ---- sidebar: decoding options ----------------------------------------------------------------------------
def decoding_ui() -> DecodeOptions:
    sb = st.sidebar
    sb.subheader("Decoding")
    if K_MODE not in st.session_state:
        st.session_state[K_MODE] = "greedy"
    mode = sb.radio("Mode", list(MODES), key=K_MODE, format_func=MODES.get,
                    help="Generate lets the model write its own translation; teacher forcing feeds it the "
                         "reference, one token per row, as in training.")
    kw = {"mode": mode}
    if mode == "beam":
        kw["beam_size"] = sb.slider("Beam width K", 1, 8, 4, key="beam_size")
    elif mode == "sample":
        kw["temperature"] = sb.slider("Temperature", 0.1, 2.0, 1.0, 0.1, key="temperature")
        kw["top_k"] = sb.number_input("Top-k (0 = all tokens)", 0, 100, 0, key="sample_top_k")
        kw["seed"] = sb.number_input("Seed", 0, 10_000, 0, key="seed")
    return DecodeOptions(**kw)


def view_ui(engine) -> tuple[str, str, int, int, str]:
    cols = st.columns([5, 2.2, 1, 1, 1.6], vertical_alignment="bottom")
    if K_KIND not in st.session_state:
        st.session_state[K_KIND] = "cross_attention"
    if K_VIEW not in st.session_state:
        st.session_state[K_VIEW] = "grid"
    kind = cols[0].segmented_control("Attention", list(KINDS), key=K_KIND, format_func=KINDS.get,
                                     required=True)
    view = cols[1].selectbox("Heads", list(VIEWS), key=K_VIEW, format_func=VIEWS.get)
    n_layers = engine.n_encoder_layers if kind == "encoder_self_attention" else engine.n_decoder_layers
    layer = cols[2].selectbox("Layer", range(n_layers), key=K_LAYER, format_func=lambda i: str(i + 1),
                              disabled=view != "head")
    head = cols[3].selectbox("Head", range(engine.n_heads), key=K_HEAD, format_func=lambda i: str(i + 1),
                             disabled=view != "head")
    scale = cols[4].selectbox("Colour scale", ["fixed", "stretch"], key=K_SCALE,
                              format_func={"fixed": "0 – 1", "stretch": "0 – max shown"}.get)
    return kind, view, layer, head, scale


# ---- step state ---------------------------------------------------------------------------------------------
def sync_run(run_key: tuple) -> None:
    """A new model, sentence or decoding setting starts a new run at step 1 with nothing forced."""
    if st.session_state.get(K_RUN) != run_key:
        st.session_state[K_RUN] = run_key
        st.session_state[K_FORCED] = ()
        st.session_state[K_STEP] = 1


def _set_step(value: int, m: int) -> None:
    st.session_state[K_STEP] = max(1, min(m, value))


def _force(prefix_ids: tuple[int, ...], choice_key: str, ids: dict[str, int]) -> None:
    st.session_state[K_FORCED] = (*prefix_ids, ids[st.session_state[choice_key]])
    st.session_state[K_STEP] = len(prefix_ids) + 1


def _unforce() -> None:
    st.session_state[K_FORCED] = ()


def step_controls(m: int) -> int:
    """Reset / back / next / run to end and a slider; returns how many rows are revealed (1..m)."""
    step = st.session_state[K_STEP] = max(1, min(m, st.session_state.get(K_STEP, 1)))
    cols = st.columns([1, 1, 1, 1.3, 6], vertical_alignment="center")
    buttons = [("Reset", "reset", ":material/first_page:", 1, step <= 1),
               ("Back", "back", ":material/chevron_left:", step - 1, step <= 1),
               ("Next", "next", ":material/chevron_right:", step + 1, step >= m),
               ("Run to end", "end", ":material/last_page:", m, step >= m)]
    for col, (label, key, icon, target, off) in zip(cols, buttons):
        col.button(label, key=key, icon=icon, icon_position="right" if key in ("next", "end") else "left",
                   on_click=_set_step, args=(target, m), disabled=off, width="stretch",
                   type="primary" if key == "next" else "secondary")
    if m > 1:
        cols[4].slider("Step", 1, m, key=K_STEP, label_visibility="collapsed")
    else:
        cols[4].caption("This run has a single step.")
    return st.session_state[K_STEP]


# ---- views ----------------------------------------------------------------------------------------------------
def step_panel(engine, trace, step: int, teacher: bool, forced: int) -> None:
    t = step - 1
    s = trace.steps[t]
    special = engine.special_pieces()
    left, right = st.columns([3, 2], gap="large")
    with left:
        st.markdown(f"**Step {step} of {trace.m}**")
        label = "Reference read so far" if teacher else "Output so far"
        st.container(key="prefix").markdown(f"<span class='lens-label'>{label}</span>"
                                            + chips(trace.target_tokens[:step], now=t, forced=forced,
                                                    special=special),
                                            unsafe_allow_html=True)
        st.markdown(f"<span class='lens-label'>as text</span> {state.text(joined(trace.target_tokens[:step]))}",
                    unsafe_allow_html=True)
        st.markdown(f"<span class='lens-label'>row {t} read</span>"
                    + chips([trace.decoder_input_tokens[t]], cls="read", special=special)
                    + f"<span class='lens-label'>and {'had to predict' if teacher else 'chose'}</span>"
                    + chips([trace.target_tokens[t]], now=0), unsafe_allow_html=True)
        if teacher:
            ok = s.extra.get("correct")
            verdict = ":green[matches]" if ok else ":red[differs from]"
            st.markdown(f"Model's top guess: {chips([s.token])} ({s.prob:.1%}) {verdict} the reference "
                        f"{chips([trace.target_tokens[t]])} (p = {s.extra.get('target_prob', 0):.1%}).",
                        unsafe_allow_html=True)
        else:
            force_ui(engine, trace, t)
    with right:
        fig = figures.topk_bar(s.top_k, chosen=s.token, reference=trace.target_tokens[t] if teacher else None,
                               title=f"Next-token probabilities at step {step}")
        st.plotly_chart(fig, key="topk", theme=None, config={"displayModeBar": False})
        st.caption("The model's most likely next tokens at this step; orange is the token "
                   + ("it would pick; the outlined bar is the reference." if teacher else "decoding chose."))


def force_ui(engine, trace, t: int) -> None:
    s = trace.steps[t]
    ids = {tok: i for tok, _ in s.top_k if tok != s.token and (i := engine.piece_to_id(tok)) is not None}
    cols = st.columns([3, 2, 2], vertical_alignment="bottom")
    if ids:
        cols[0].selectbox("Force another token at this step", list(ids), key="force_choice",
                          help="Re-decode from here as if the model had chosen this candidate.")
        prefix = tuple(trace.steps[i].id for i in range(t))
        cols[1].button("Force it", key="force", on_click=_force, args=(prefix, "force_choice", ids),
                       width="stretch")
    else:
        cols[0].caption("No other candidate can be forced here.")
    if st.session_state.get(K_FORCED):
        cols[2].button("Undo forcing", key="unforce", on_click=_unforce, width="stretch")


def beam_panel(trace, step: int) -> None:
    st.markdown("#### Beams")
    if trace.beam_steps:
        live = trace.beam_steps[min(step, len(trace.beam_steps)) - 1]
        st.markdown(f"Live beams after step {min(step, len(trace.beam_steps))}:")
        st.dataframe([{"rank": i + 1, "prefix": " ".join(b["tokens"]), "text": joined(b["tokens"]),
                       "log-prob": round(float(b["score"]), 3)} for i, b in enumerate(live)],
                     hide_index=True, width="stretch")
    st.caption("Beam search keeps the K best partial translations at every step; each finished hypothesis "
               "has its own attention, chosen with 'Hypothesis' above.")


def export_panel(trace, fig, name: str, run_name: str) -> None:
    with st.expander("Export this run"):
        cols = st.columns(6)
        if exports.image_export_available():
            cols[0].download_button("PNG (this view)", lambda: exports.image(fig, "png"), f"{name}.png",
                                    "image/png", key="dl_png", on_click="ignore")
            cols[1].download_button("SVG (this view)", lambda: exports.image(fig, "svg"), f"{name}.svg",
                                    "image/svg+xml", key="dl_svg", on_click="ignore")
        else:
            cols[0].info("PNG/SVG need Chrome or Chromium on the server; use the camera icon on a chart.")
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


# ---- page ------------------------------------------------------------------------------------------------------
def main() -> None:
    st.markdown(CSS, unsafe_allow_html=True)
    model_key, engine = state.page_header(
        "Attention Lens", "Watch a Transformer translate one token at a time, with every attention map it computed.")
    options = decoding_ui()
    source, _, chosen = state.text_inputs(engine)
    vocabulary.source_help(engine, source)  # unknown words named, the words it knows (E-LAB)
    teacher = options.mode == "teacher_forced"
    target = state.target_input() if teacher else None
    if chosen:
        st.caption(f":material/lightbulb: {chosen['note']}")

    sync_run((model_key, source, target, services.options_key(options)))
    trace = run_or_stop(model_key, source, target, options)
    special = engine.special_pieces()
    st.container(key="tokens").markdown("<span class='lens-label'>tokens fed to the encoder</span>"
                                        + chips(trace.source_tokens, special=special), unsafe_allow_html=True)
    if special & {*trace.source_tokens, *trace.target_tokens}:
        st.caption("Dotted grey tokens are the model's special tokens (padding, end of sentence, decoder start, "
                   "language codes).")
    if trace.options.get("normalised_source") != source.strip():
        st.caption(f"Normalised to the corpus conventions: “{state.text(trace.options['normalised_source'])}”")
    state.show_warnings(trace)
    stepper(model_key, source, target, options)


def run_or_stop(model_key: str, source: str, target: str | None, options: DecodeOptions):
    """The cached run for these inputs and the tokens forced so far; a plain error (never a traceback)
    stops the page."""
    forced = () if options.mode == "teacher_forced" else tuple(st.session_state.get(K_FORCED, ()))
    try:
        return services.get_trace(model_key, source, target, services.options_key(replace(options, forced=forced)))
    except (ModelInputError, CheckpointError) as exc:
        st.error(state.text(exc))
        st.stop()


@st.fragment
def stepper(model_key: str, source: str, target: str | None, options: DecodeOptions) -> None:
    """Everything that changes with the step. A fragment: a step click reruns only this part of the page,
    reading the run from the cache (Streamlit docs, "Working with fragments")."""
    engine = services.get_engine(model_key)
    teacher = options.mode == "teacher_forced"
    trace = run_or_stop(model_key, source, target, options)
    forced = len(st.session_state.get(K_FORCED, ())) if not teacher else 0
    shown = trace
    if options.mode == "beam" and trace.beams:
        titles = [f"#{i + 1}: {joined(b.target_tokens)}  (log-prob {b.options.get('score', 0):.2f})"
                  for i, b in enumerate(trace.beams)]
        pick = st.selectbox("Hypothesis", range(len(trace.beams)), key=K_BEAM, format_func=titles.__getitem__)
        shown = trace.beams[pick]

    st.divider()
    step = step_controls(shown.m)
    step_panel(engine, shown, step, teacher, forced)
    if options.mode == "beam":
        beam_panel(trace, step)

    st.divider()
    kind, view, layer, head, scale = view_ui(engine)
    fig = views.attention_figure(shown, kind, view, step, layer, head, scale)
    st.plotly_chart(fig, key="attention", theme=None, config={"displaylogo": False})
    st.caption(CAPTIONS[kind])
    export_panel(shown, fig, f"{model_key}-{kind}-step{step}", f"{model_key}-{options.mode}-trace")

main()
