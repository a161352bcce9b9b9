"""Explore: type a sentence, step through the decoding token by token, and see every attention map.

The run is decoded once per (model, input, options) and cached (services.get_trace); the step controls only
choose how many of its rows to reveal, so a click never re-encodes or re-decodes. Layout for a 1366 x 768
projector: inputs in one row, then the step bar over the attention picture with the step's words and the
next-token chart beside it, all above the fold. The page's state is in its URL (explore/url.py).
"""

from __future__ import annotations

from dataclasses import replace

import streamlit as st
from attention_lens.app import exports, nonfinite, services, state
from attention_lens.app.render import beams, spectrogram, views
from attention_lens.app.screens import audio_input, kv_cache, page_url, tour, vocabulary
from attention_lens.app.screens.explore import analysis, panels, url, why
from attention_lens.app.screens.explore import controls as ctl
from attention_lens.app.screens.explore import stepper as explore_stepper
from attention_lens.app.services import CheckpointError, DecodeOptions, ModelInputError

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
# A run whose grid would be unreadable or slow to step opens on a single panel instead, saying why (fast_view):
LONG_TOKENS = 40  # past this many source tokens the grid's panels are too narrow to read: one head, large
# Past this many panels per kind (layers x heads) a step in the grid is too slow: every panel is redrawn on each
# click, and the 48 panels of a 6 x 8 model (opus-mt's size) were far slower than a step click may take (150 ms
# on the server, 1.5 s to draw), where the shipped models' 3 x 4 = 12 panels stay within it. Such a model opens
# on the mean of the heads (one panel).
GRID_PANELS = 24
K_OPENED = "fast_view_for"  # what the last single-panel default was applied for (once per model / long source)
K_PICTURE, K_NOTE = "present_picture", "preset_note"
K_SHARE_OPEN = "share_open"  # the Copy link popover is open
K_FORCE_OPEN = "force_open"  # the force box's expander is open
# Open, these show something of the step on screen that only the server computes: the stepper reports every step
# to the server while one is (the KV cache, the saliency toggle, the exports, the link, forcing), and in beam
# search, whose table of live beams follows the step. The logit lens is not among them: every step's table is on
# the page while it is on, and the stepper shows the step on screen's (explore.stepper.per_step_html).
STEP_PANELS = (K_SHARE_OPEN, K_FORCE_OPEN, kv_cache.K_OPEN, why.K_SALIENCY, panels.K_EXPORT_OPEN)
K_PRESET_SEEN = url.K_PRESET_SEEN


def _present_toggled() -> None:
    st.session_state[ctl.K_VIEW_KEEP] = "head" if st.session_state[ctl.K_PRESENT] else "mean"


def top_row(engine, model_key: str) -> tuple[str, dict | None, bool]:
    """The inputs' row: the example and the sentence (a speech model: the clip, audio_input.clip_ui; its source is
    the clip's label, or "" when no clip could be read), the tour and presenter mode."""
    cols = st.columns([2.1, 5.0, 1, 1.6], vertical_alignment="bottom")
    if services.is_speech(engine):
        clip = audio_input.clip_ui(model_key, cols[:2])
        source, chosen = (clip.label if clip is not None else ""), None
    else:
        source, _, chosen = state.text_inputs(engine, cols=cols[:2])
    tour.start_button(cols[2])
    present = cols[3].toggle("Present", key=ctl.K_PRESENT, on_change=_present_toggled,
                             help="Large text, one picture at a time, no sidebar (also `present=1` in the link).")
    if present:  # the sidebar is hidden: its model and mode here
        ctl.present_menu(cols[3], model_key)
    return source, chosen, present


def apply_preset_hint(chosen: dict | None) -> None:
    """A newly chosen example opens on the view that tells its story (assets/presets.json, "view")."""
    pid = chosen["id"] if chosen else state.CUSTOM
    if st.session_state.get(K_PRESET_SEEN) == pid:
        return
    st.session_state[K_PRESET_SEEN] = pid
    hint = (chosen or {}).get("view")
    if hint:
        url.apply({k: str(v) for k, v in hint.items()})


def main() -> None:
    url.read_once()
    present = bool(st.session_state.get(ctl.K_PRESENT))
    ctl.style(present)
    model_key, engine = state.page_header(
        "Attention Lens", "Watch a Transformer translate one token at a time, with every attention map it computed.")
    options = ctl.decoding_ui(engine)
    tour.panel()
    source, chosen, present = top_row(engine, model_key)
    speech = services.is_speech(engine)
    if speech and not source:  # no clip yet, or one the reader refused (said above): the page waits for one
        url.write(audio_input.waiting_link(model_key))
        st.stop()
    if not speech:
        vocabulary.source_help(engine, source)  # unknown words named, the words it knows (E-LAB)
    if st.session_state.get(K_PRESET_SEEN) == url.LINKED:  # a session's first run keeps what its link asked for
        st.session_state[K_PRESET_SEEN] = chosen["id"] if chosen else state.CUSTOM
    apply_preset_hint(chosen)
    # the note and the attention kind it was written for (a note on cross-attention is not shown under another)
    st.session_state[K_NOTE] = (chosen["note"], (chosen.get("view") or {}).get("kind")) if chosen else None
    teacher = options.mode == "teacher_forced"
    if speech:  # teacher forcing opens on the clip's own transcript
        if teacher and not str(st.session_state.get(state.K_TARGET) or "").strip():
            st.session_state[state.K_TARGET] = audio_input.teacher_reference(
                audio_input.current_clip(model_key, source))
    else:
        panels.prefill_reference(model_key, source, teacher)  # teacher forcing never opens on an error
    target = state.target_input() if teacher else None
    if teacher and not speech:
        panels.reference_help(engine, target)
    url.check_ranges(max(engine.n_encoder_layers, engine.n_decoder_layers), engine.n_heads)
    url.apply_pending(model_key, engine, len(panels.target_pieces(model_key)))
    url.show_notices()
    asked = st.session_state.pop(url.K_VIEW_ASKED, False)  # by a link, a preset's hint or the tour, this run
    new_run = sync_run((model_key, source, target, options))
    trace = run_or_stop(model_key, source, target, options)
    if new_run:
        open_fast(fast_view(engine, model_key, trace), asked)
    special = engine.special_pieces()
    clip = audio_input.current_clip(model_key, source)
    if clip is not None:
        st.caption(audio_input.clip_note(clip, trace))
    elif not present:  # presenter mode: the picture's axes name the tokens
        st.container(key="tokens").markdown(source_chips(trace.source_tokens, special), unsafe_allow_html=True)
    if clip is None and trace.normalised_source != source.strip():
        st.caption(f"Normalised to the corpus conventions: “{state.text(trace.normalised_source)}”")
    if clip is None:  # a clip's run says its warnings on the clip's line (audio_input.clip_note)
        state.show_warnings(trace)
    nan_note(model_key, source, target, options, trace)
    cut = length_note(trace, special, teacher)
    if cut:
        st.info(cut, icon=":material/content_cut:")
    st.fragment(stepper)(model_key, source, target, options)


def nan_note(model_key: str, source: str, target: str | None, options: DecodeOptions, trace) -> None:
    """Say so when the model computes NaN or infinity (weights a diverged training left), and where it first shows;
    where no attention weight is NaN, the run is read again through the logit lens to name the decoder layer."""
    found = nonfinite.first_nonfinite(trace)
    if found is None:
        return
    if found[0] == "probabilities" and not options.lens and options.mode != "beam":
        trace = run_or_stop(model_key, source, target, replace(options, lens=True))
    st.error(nonfinite.explain(trace), icon=":material/error:")


def length_note(trace, special: frozenset[str], teacher: bool) -> str | None:
    """What to say when free running stopped at its length limit before the model wrote an end token: the
    output on screen is cut there, not a finished translation; None when it ended (or was teacher-forced)."""
    tokens = trace.target_tokens
    if teacher or not tokens or tokens[-1] in special:
        return None
    return (f"Decoding stopped at its length limit ({trace.m} tokens) before the model wrote its end token: the "
            f"output is cut there, not a finished translation (a model that cannot read a sentence often repeats "
            f"itself instead of ending it).")


def source_chips(tokens: list[str], special: frozenset[str]) -> str:
    """The encoder's tokens as chips; past LONG_TOKENS, in a box two chip rows high that scrolls, with their
    count (a 108-token sentence's nine rows of chips pushed the picture below the fold at 1366 x 768)."""
    chips = ctl.chips(tokens, special=special)
    if len(tokens) <= LONG_TOKENS:
        return f"<span class='lens-label'>tokens fed to the encoder</span>{chips}"
    return (f"<span class='lens-label'>tokens fed to the encoder ({len(tokens)} tokens; scroll for all)</span>"
            f"<div style='max-height: 4.3em; overflow-y: auto'>{chips}</div>")


def sync_run(run_key: tuple) -> bool:
    """A new model, sentence or decoding setting starts a new run at step 1 (or a link's step) with nothing
    forced; returns whether it did."""
    if st.session_state.get(ctl.K_RUN) == run_key:
        return False
    st.session_state[ctl.K_RUN] = run_key
    st.session_state[ctl.K_FORCED] = st.session_state.pop(url.K_PENDING_FORCED, ())  # a link's, else none
    st.session_state[ctl.K_STEP] = st.session_state.pop(url.K_PENDING_STEP, 1)
    st.session_state[ctl.K_PLAY] = False
    return True


def fast_view(engine, model_key: str, trace) -> tuple[str, tuple, str] | None:
    """The single-panel view a run opens on instead of the grid, what that default is for, and the notice
    saying why; None when the grid suits the run (the shipped models with a sentence of up to LONG_TOKENS)."""
    n = len(trace.source_tokens)
    if spectrogram.audio_source(trace) is not None:
        return "head", ("clip", model_key), (
            "A clip's attention has a column per 20 ms of sound: the page opens on one head, large, over the "
            "spectrogram; the mean and the grid of every head are one click away.")
    if n > LONG_TOKENS:
        return "head", ("tokens", model_key, tuple(trace.source_tokens)), (
            f"This source has {n} tokens, too many to read in the grid: the page opens on one head, large; "
            "the grid is one click away.")
    layers, heads = max(engine.n_encoder_layers, engine.n_decoder_layers), engine.n_heads
    if layers * heads > GRID_PANELS:
        return "mean", ("panels", model_key), (
            f"This model has {layers} × {heads} heads per kind: the page opens on the mean of the heads, one panel "
            f"per layer, which steps faster. A layer's name shows its {heads} heads; the Heads button picks any "
            f"head in two clicks; the grid of all {layers * heads} heads is one click away (slower to step).")
    return None


def open_fast(rule: tuple[str, tuple, str] | None, asked: bool) -> None:
    """A new run that is too big for the grid opens on rule's single panel, once for what it is for (a model,
    a long source), unless a link, preset or tour named the view; one head, the most specific view, is never
    replaced. A view the user picks afterwards (the grid too) is kept while that holds."""
    if rule is None or st.session_state.get(K_OPENED) == rule[1]:
        return
    st.session_state[K_OPENED] = rule[1]
    if not asked and st.session_state.get(ctl.K_VIEW_KEEP, ctl.DEFAULT_VIEW) not in (rule[0], "head"):
        st.session_state[ctl.K_VIEW_KEEP] = rule[0]


def run_or_stop(model_key: str, source: str, target: str | None, options: DecodeOptions):
    """The cached run for these inputs and the tokens forced so far; a plain error (never a traceback)
    stops the page."""
    forced = () if options.mode == "teacher_forced" else tuple(st.session_state.get(ctl.K_FORCED, ()))
    try:
        clip = audio_input.current_clip(model_key, source)
        if clip is not None:
            return services.get_audio_trace(model_key, clip.digest, target, replace(options, forced=forced),
                                            clip.audio)
        return services.get_trace(model_key, source, target, replace(options, forced=forced))
    except (ModelInputError, CheckpointError) as exc:
        st.error(state.text(exc))
        st.stop()


def _head_off(model_key: str, engine, name: str) -> None:
    """The stepper's "Switch this head off" (name kind:layer:head, 1-based): that head off for this model, if it has
    it and it is not off already."""
    off = analysis.ablated(model_key)
    if name in services.head_names(engine) and name not in off:
        analysis.set_ablated(model_key, (*off, name))


K_GOLD = "explore_gold"  # {model, source, target, gold, reading}: gold links sent by the Alignment page


def gold_links(engine, model_key: str, source: str, target: str | None, teacher: bool, shown) -> dict | None:
    """The gold links the Alignment page sent with a sentence (session `explore_gold`) as cells of the run's
    cross-attention (services.gold_cells), while the run on screen is that model, source and target, teacher
    forced; None otherwise. A caption says so when they cannot be placed on its pieces."""
    sent = st.session_state.get(K_GOLD)
    if not teacher or not isinstance(sent, dict) or sent.get("model") != model_key \
            or str(sent.get("source", "")).strip() != source.strip() \
            or str(sent.get("target", "")).strip() != (target or "").strip():
        return None
    try:
        cells = services.gold_cells(engine, shown, sent)
    except ValueError:
        cells = None
    if cells is None:
        st.caption("The gold links of this sentence could not be placed on its pieces (its words and the model's "
                   "pieces do not match), so they are not drawn.")
    return cells


def stepper(model_key: str, source: str, target: str | None, options: DecodeOptions) -> None:
    """The view pickers, the stepper (app/screens/explore/stepper: it steps in the browser) and the panels that
    need the server at a step. A fragment: a view switch, or the step the stepper reports, reruns only this
    part of the page, reading the run from the cache."""
    engine = services.get_engine(model_key)
    teacher = options.mode == "teacher_forced"
    present = bool(st.session_state.get(ctl.K_PRESENT))
    trace = run_or_stop(model_key, source, target, options)
    forced = len(st.session_state.get(ctl.K_FORCED, ())) if not teacher else 0
    shown = trace
    if options.mode == "beam" and trace.beams:
        special = engine.special_pieces()
        titles = [f"#{i + 1}: {beams.text(b.target_tokens, special)}  (log-prob {b.score:.2f})"
                  for i, b in enumerate(trace.beams)]
        pick = st.selectbox("Hypothesis", range(len(trace.beams)), key=ctl.K_BEAM, format_func=titles.__getitem__)
        shown = trace.beams[pick]
    ss = st.session_state
    row = st.columns([2.2, 1.0, 1.4, 1.2], vertical_alignment="center")
    # Kind, view, layer and head are switched in the stepper (drawn in the browser, nothing sent); the server
    # hears them with the step. Their Streamlit twins, hidden, are for scripted clients and AppTest.
    bars_only = present and ss.get(K_PICTURE) == "next"  # presenter mode's next-token picture: no attention shown
    with st.container(key="server_view"):
        kind, view, layer, head, scale = ctl.view_ui(engine, [*st.columns(4), row[1]], scale_disabled=bars_only)
    rule = fast_view(engine, model_key, trace)
    note, note_kind = ss.get(K_NOTE) or (None, None)
    with st.container(key="server_view_notes"):  # hidden: the stepper shows these for the view on screen
        if rule and view == rule[0]:  # why this run is not on the grid
            st.caption(f":material/speed: {rule[2]}")
    reading = analysis.reading_ui(row[0], disabled=bars_only)  # weights / norm-weighted / rollout (E-CONTRIB)
    if reading != "weights":
        full = run_or_stop(model_key, source, target, replace(options, contributions=True))
        shown = analysis.as_reading(full, shown, reading)
    picture = "attention"
    if present:  # one picture at a time
        picture = row[2].segmented_control("Picture", ["attention", "next"], key=K_PICTURE, required=True,
                                           default="attention", label_visibility="collapsed",
                                           format_func={"attention": "Attention", "next": "Next token"}.get)
    # drawn only when opened (key + on_change): the link in it is for the step the stepper reported
    share = row[3].popover(":material/link: Copy link", width="stretch", key=K_SHARE_OPEN, on_change="rerun")
    with st.container(key="server_steps"):  # hidden: the step as server widgets, for scripted clients
        step = ctl.step_bar(shown.m)
    forced_ids = tuple(ss.get(ctl.K_FORCED, ())) if not teacher else ()
    run_key = (model_key, source, target, repr(options), forced_ids, reading, ss.get(ctl.K_BEAM, 0))
    share_of = shown.contributions["source_share"] if shown.contributions is not None else None
    with st.container(key="attention"):  # the picture's place (the tour scrolls it under its text)
        step = explore_stepper.draw(
            shown, run_key, step, teacher=teacher, special=engine.special_pieces(), n_forced=forced, kind=kind,
            view=view, layer=layer, head=head, scale=scale, present=present, picture=picture,
            caption=CAPTIONS[kind], captions=CAPTIONS, source_share=share_of,
            sync=(options.mode == "beam" and not present) or any(ss.get(k) for k in STEP_PANELS),
            notes={"fast_note": {"view": rule[0], "text": rule[2]} if rule else None,
                   "note": {"text": note, "kind": note_kind} if note else None,
                   "off": list(analysis.ablated(model_key)), "head_off": picture != "next"},
            on_head_off=lambda name: _head_off(model_key, engine, name),
            gold=gold_links(engine, model_key, source, target, teacher, shown),
            samples=audio_input.samples_of(audio_input.current_clip(model_key, source)))
    if picture != "next":
        with st.container(key="server_view_notes_2"):  # hidden, as above: the stepper draws them
            if view == "head":
                analysis.head_off_button(model_key, kind, layer, head)
            if note and note_kind in (None, services.CODE_OF[kind]):
                st.caption(f":material/lightbulb: {state.text(note)}")
    if not present:
        if not teacher:
            force = st.expander("Force another token at this step", icon=":material/alt_route:", key=K_FORCE_OPEN,
                                on_change="rerun")
            if force.open:
                with force:
                    panels.force_ui(engine, shown, step, model_key)
            elif ss.get(ctl.K_FORCED):
                st.button("Undo forcing", key="unforce", on_click=panels._unforce)
        why.why_panel(model_key, source, target, options, shown, step)  # logit lens, gradient saliency
    analysis.ablation_panel(model_key, source, target, options, shown)
    if not present:
        kv_cache.panel(model_key, shown, step)
    if options.mode == "beam" and not present:  # the table follows the step (sync: reported after each)
        panels.beam_panel(trace, step, engine.special_pieces())
    link = url.write(url.current(model_key, source, target, options.mode, step, kind, view, layer, head))
    page_url.share_link(share, link, K_SHARE_OPEN + "_link",
                        "model, sentence, mode, step, view, reading, forced tokens, heads off")
    if not present:  # the picture of the step on screen, built only while the export box is open
        fig = views.attention_figure(shown, kind, view, step, layer, head, scale) if ss.get(
            panels.K_EXPORT_OPEN) else None
        panels.export_panel(shown, fig, exports.file_stem(model_key, shown, step, kind, reading),  # names, title
                            exports.file_stem(model_key, shown, step, reading=reading),
                            exports.image_title(model_key, kind, view, layer, head, step, reading),
                            reading=reading, heads_off=analysis.ablated(model_key))

main()
