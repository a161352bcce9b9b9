"""Explore's panels below the attention picture: forcing a token, the live beams and the exports (the step's
tokens and next-token bars are drawn in the page by the stepper, app/render/stepper)."""

from __future__ import annotations

import streamlit as st
from attention_lens.app import exports, services, state
from attention_lens.app.render import beams
from attention_lens.app.screens.explore.controls import K_FORCED, K_STEP, chips

K_FORCE_MISS, K_OWN, K_FORCE_AT = "force_miss", "reference_own", "force_at"
K_WAS_TEACHER, K_OWN_FOR = "was_teacher", "reference_own_for"  # when the reference box is filled


def _unforce() -> None:
    st.session_state[K_FORCED] = ()


LISTED = 5000  # a target vocabulary up to this size is listed whole in the force box; a larger one (opus-mt's
# 58k pieces would be ~0.6 MB on every step) lists the candidates and takes any typed piece or word


@st.cache_resource(max_entries=8)
def target_pieces(model_key: str) -> tuple[str, ...]:
    """Every piece of a model's target vocabulary, in id order (ids until the engine has no more)."""
    engine = services.get_engine(model_key)
    pieces = []
    for i in range(200_000):
        try:
            piece = engine.piece(i)
        except (ValueError, IndexError, KeyError, RuntimeError):
            break
        if piece == f"<id {i}>":  # the Hugging Face engine's name for an id past its tokenizer
            break
        pieces.append(piece)
    return tuple(pieces)


def forcible(engine, typed: str) -> int | None:
    """The id of what was typed into the force box: the piece itself, or the word as one whole-word piece."""
    typed = typed.strip()
    for piece in (typed, "▁" + typed):
        if typed and (i := engine.piece_to_id(piece)) is not None and i not in engine.special_ids():
            return i
    return None


def _force_typed(engine, prefix_ids: tuple[int, ...]) -> None:
    i = forcible(engine, st.session_state.get("force_choice") or "")
    if i is None:
        st.session_state[K_FORCE_MISS] = st.session_state.get("force_choice")
        return
    st.session_state[K_FORCED] = (*prefix_ids, i)
    st.session_state[K_STEP] = len(prefix_ids) + 1
    st.session_state.pop("force_choice", None)  # the forced token is now the step's own, no longer a candidate


def force_ui(engine, trace, step: int, model_key: str) -> None:
    """Force any piece of the target vocabulary at this step: the step's other candidates first, then the
    rest of the vocabulary (searchable by typing); a word typed that is not in the list is looked up too."""
    t = step - 1
    s = trace.steps[t]
    special = engine.special_pieces()
    candidates = [tok for tok, _ in s.top_k if tok != s.token and tok not in special]
    vocab = target_pieces(model_key)
    rest = sorted(p for p in vocab if p not in special and p != s.token) if len(vocab) <= LISTED else []
    options = list(dict.fromkeys([*candidates, *rest]))
    at = (trace.source_tokens, tuple(trace.target_tokens[:step]))
    if st.session_state.get(K_FORCE_AT) != at:  # a new step or run: the box starts empty
        st.session_state[K_FORCE_AT] = at
        # Set, not popped: a popped key leaves the browser's box showing (and sending) an earlier step's choice.
        st.session_state["force_choice"] = None
    typed = st.session_state.get("force_choice")
    if typed and typed not in options:  # typed, not listed: a large vocabulary's word, kept as the choice
        options.append(typed)
    cols = st.columns([3, 2], vertical_alignment="bottom")
    choice = cols[0].selectbox("Force another token here", options, index=None, key="force_choice",
                               accept_new_options=True, placeholder="a candidate, or type a piece",
                               help="The step's other candidates first, then the whole target vocabulary: type to "
                                    "search. Re-decodes from here as if the model had chosen this token.")
    prefix = tuple(trace.steps[i].id for i in range(t))
    # A typed word is looked up as soon as it is chosen: the piece it forces is named, an unknown word is
    # refused before "Force it" (which stays disabled) rather than after.
    found = forcible(engine, choice) if choice is not None else None
    cols[1].button("Force it", key="force", on_click=_force_typed, args=(engine, prefix), width="stretch",
                   disabled=found is None)
    missed = st.session_state.pop(K_FORCE_MISS, None)
    if choice is not None and found is None:
        missed = choice
    if missed:
        st.warning(f"“{state.text(missed)}” is not a token of this model's target vocabulary: type a word it "
                   "knows, or one of its pieces (the list shows them as you type).")
    elif found is not None and engine.piece(found) != choice:
        st.caption(f"“{state.text(choice)}” is the piece {chips([engine.piece(found)])} (id {found}).",
                   unsafe_allow_html=True)
    if st.session_state.get(K_FORCED):
        st.button("Undo forcing", key="unforce", on_click=_unforce)


def beam_panel(trace, step: int, special: frozenset[str] = frozenset()) -> None:
    """The beam table (app/render/beams.py, E-LAB): finished hypotheses, the chosen one first, then the live."""
    st.markdown("#### Beams")
    if trace.beam_steps:
        shown = min(step, len(trace.beam_steps))
        st.markdown(f"What the search holds after step {shown}:")
        st.dataframe(beams.beam_rows(trace, step, special), hide_index=True, width="stretch", key="beam_table")
    st.caption("Beam search keeps the K best partial translations at every step; a hypothesis is finished once "
               "it writes the end token, and the best finished one (log-prob per piece) is the translation. "
               "Each has its own attention, chosen with 'Hypothesis' above.")


K_EXPORT_OPEN = "export_open"  # the export expander is open (its buttons are drawn only then)


def export_panel(trace, fig, name: str, run_name: str, title: str = "", reading: str = "weights",
                 heads_off: tuple[str, ...] = ()) -> None:
    """name: the picture's file name, run_name: the run's (app.exports.file_stem); title: the picture's; reading:
    what the trace's maps hold (exports.READING_NAMES), heads_off: the heads switched off (the HTML report and the
    CSV say both).
    The buttons are drawn only while the expander is open: a step click then sends one element here, not 14."""
    box = st.expander("Export this run", key=K_EXPORT_OPEN, on_change="rerun")
    if not box.open:
        return
    with box:
        row = st.container(horizontal=True, gap="small")
        if exports.image_export_available():
            row.download_button("PNG (this view)", lambda: exports.image(fig, "png", title=title), f"{name}.png",
                                "image/png", key="dl_png", on_click="ignore")
            row.download_button("SVG (this view)", lambda: exports.image(fig, "svg", title=title), f"{name}.svg",
                                "image/svg+xml", key="dl_svg", on_click="ignore")
        else:
            row.info("PNG/SVG need Chrome or Chromium on the server; use the download button above a chart.")
        row.download_button("HTML report", lambda: exports.html_report(trace, reading=reading, heads_off=heads_off),
                            f"{run_name}.html", "text/html", key="dl_html", on_click="ignore")
        row.download_button("CSV (long)", lambda: exports.csv_bytes(trace, reading), f"{run_name}.csv", "text/csv",
                            key="dl_csv", on_click="ignore")
        row.download_button("Trace JSON", lambda: exports.json_bytes(trace), f"{run_name}.json",
                            "application/json", key="dl_json", on_click="ignore")
        row.download_button("Trace NPZ", lambda: exports.npz_bytes(trace), f"{run_name}.npz",
                            "application/octet-stream", key="dl_npz", on_click="ignore")
        st.caption("The HTML report holds every step and every attention map and opens offline; the CSV has one "
                   "row per weight (kind, reading, layer, head, query, key, weight).")


# ---- teacher forcing's reference --------------------------------------------------------------------------------
def own_translation(model_key: str, source: str) -> str:
    """The model's own greedy translation of source, as text ("" when the source cannot be decoded)."""
    try:
        trace = services.get_trace(model_key, source, None, services.DecodeOptions())
    except services.ModelInputError:
        return ""
    return services.get_engine(model_key).detokenize([s.id for s in trace.steps])


def _use_reference(text: str) -> None:
    st.session_state[state.K_TARGET] = text


def ask_for_reference(model_key: str, source: str, ask: str, key: str) -> None:
    """A page that teacher-forces a reference it does not have (a sentence was typed, its reference box is
    empty): `ask` for one, and offer the model's own greedy translation, which the button `key` puts in the box."""
    own = own_translation(model_key, source) if source.strip() else ""
    st.info(ask + (f" Or use the model's own translation: “{state.text(own)}”." if own else ""))
    if own:
        st.button("Use the model's translation", key=key, on_click=_use_reference, args=(own,))


def prefill_reference(model_key: str, source: str, teacher: bool) -> None:
    """Teacher forcing opens on the model's own translation when its box is empty (the box stays editable), so
    choosing the mode, or a new sentence in it, never starts on an error; a box the user empties afterwards
    stays empty. Call on every run, before the reference box is drawn."""
    ss, at = st.session_state, (model_key, source)
    arrived = not ss.get(K_WAS_TEACHER) or ss.get(K_OWN_FOR) != at
    ss[K_WAS_TEACHER] = teacher
    if not teacher:
        return
    ss[K_OWN_FOR] = at
    if arrived and not str(ss.get(state.K_TARGET) or "").strip():
        ss[state.K_TARGET] = ss[K_OWN] = own_translation(model_key, source)


def unknown_reference_words(engine, target: str) -> list[tuple[str, list[str]]]:
    """Words of a reference the model's target vocabulary does not know, with the pieces each became: a word
    read as the unknown piece, and (for a model with a word list, whose vocabulary holds its words whole) an
    alphabetic word that is not one whole-word piece."""
    if not target.strip():
        return []
    unknown, special, whole = engine.unknown_pieces(), engine.special_ids(), bool(engine.lexicon())
    found = []
    for word in dict.fromkeys(engine.normalise_target(target).split()):
        pieces = [engine.piece(i) for i in engine.encode_target(word, truncate=False) if i not in special]
        if any(p in unknown for p in pieces) or (whole and word.isalpha() and len(pieces) > 1):
            found.append((word, pieces))
    return found


def reference_help(engine, target: str) -> None:
    """Under the reference box: where its text came from, and the words of it the model does not know."""
    if target and target == st.session_state.get(K_OWN):
        st.caption(":material/edit: The reference is the model's own translation; edit it to feed the decoder "
                   "another one.")
    words = unknown_reference_words(engine, target)
    if words:
        named = ", ".join(f"“{state.text(w)}” (read as {state.text(' '.join(p))})" for w, p in words)
        st.warning(f"**Words of the reference this model does not know:** {named}. The decoder is fed these "
                   f"pieces, which its training never used as words.", icon=":material/spellcheck:")
