"""What every page shares besides the model: session keys, presets, the model picker, the source/target inputs,
the page header, and `text` (user text shown as text, never as markup).

Widgets shared across pages keep their value for the whole session (`persist_state="session"`), so the model
and sentence chosen on one page are there on the next. Engines and traces come from attention_lens.app.services.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st
from attention_lens.app import registry, services
from attention_lens.app.render import views
from attention_lens.app.services import (
    CheckpointError,
    DecodeOptions,
    Engine,
    Trace,
    get_engine,
    get_trace,
)

ROOT = registry.ROOT
# The attention kinds by their code in links and head names (model.engine.heads), each with the title the
# pictures carry (app.render.views), in the order pages offer them.
KINDS_BY_CODE = {services.CODE_OF[kind]: (kind, title) for kind, title in views.KINDS.items()}

PRESETS_FILE = ROOT / "assets" / "presets.json"
CUSTOM = "custom"

# Session-state keys shared by pages.
K_MODEL, K_PRESET, K_SOURCE, K_TARGET = "model", "preset", "source", "target"
K_LINKED_TEXT = "linked_text"  # a link named the sentence (explore.url.apply): no preset replaces it
K_PRESET_SEEN = "preset_seen"  # the example whose view hint Explore applied (or the link's): not applied again
K_FOLDER = "any_folder"  # single-user mode only (registry.any_folder_allowed)
# Markdown (and Streamlit's own :color[] / :emoji: / $math$) syntax characters, plus HTML's. A numeric character
# reference is always literal text in CommonMark, so user text escaped this way shows as typed, never as markup.
_MARKUP = set("\\`*_{}[]<>#!|$:~&")

def text(value: object) -> str:
    """User-derived text (tokens, sentences, model names, card fields, error messages) for st.markdown and
    friends, with or without unsafe_allow_html: every markup character becomes a character reference."""
    return "".join(f"&#{ord(c)};" if c in _MARKUP else c for c in str(value))


# ---- presets --------------------------------------------------------------------------------------------
@st.cache_data(max_entries=1)
def presets() -> list[dict[str, Any]]:
    return json.loads(PRESETS_FILE.read_text(encoding="utf-8"))["presets"]


def text_kind(card: dict[str, Any]) -> str:
    """"raw" for a model that reads text as people type it (the everyday models), else "conventions"."""
    return "raw" if card.get("text") == "raw" else "conventions"


def presets_for(card: dict[str, Any]) -> list[dict[str, Any]]:
    """The presets written for a model's language pair and kind of text (every preset for a model that names
    no pair: a Hugging Face model); all of them when none fits."""
    pair, kind = card.get("pair"), text_kind(card)
    fit = [p for p in presets() if pair is None or (p["pair"] == pair and p.get("text", "conventions") == kind)]
    return fit or presets()


def preset(pid: str) -> dict[str, Any] | None:
    return next((p for p in presets() if p["id"] == pid), None)


# ---- shared widgets -------------------------------------------------------------------------------------
def _card_lines(card: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if "pair" not in card and "family" in card:  # a Hugging Face model (HFEngine's card)
        pair, variant = card["family"], "Hugging Face hub" if card.get("hub") else "Hugging Face folder"
    else:
        pair, variant = card.get("pair", "?"), card.get("variant", "?")
    pair, variant = text(pair), text(variant)
    metrics = next((card[k] for k in ("test_metrics", "metrics") if isinstance(card.get(k), dict)), {})
    flat = {}
    for k, v in metrics.items():
        if isinstance(v, dict):  # e.g. {"test": {"bleu": ..}}
            flat.update({f"{k} {k2}": v2 for k2, v2 in v.items() if isinstance(v2, int | float)})
        elif isinstance(v, int | float) and not isinstance(v, bool):
            flat[k] = v
    return f"**{pair}** · {variant}", flat


METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF", "exact_match": "exact match", "n": "test sentences",
                "teacher_forced_accuracy": "teacher-forced accuracy", "teacher_forced_loss": "teacher-forced loss",
                "aer": "AER"}


def metric_name(key: str) -> str:
    """A card's measure as the page names it (`teacher_forced_accuracy` -> `teacher-forced accuracy`)."""
    return " ".join(METRIC_NAMES.get(part, part.replace("_", " ")) for part in key.split(" "))


def _fmt_metric(name: str, value: float) -> str:
    if 0 <= value <= 1 and any(s in name for s in ("accuracy", "exact", "aer", "precision", "recall")):
        return f"{value:.1%}"
    return f"{value:.3g}" if isinstance(value, float) else str(value)


def _use_folder() -> None:
    if st.session_state.get(K_FOLDER, "").strip():
        st.session_state[K_MODEL] = registry.folder_key(st.session_state[K_FOLDER])


def _folder_entry() -> registry.ModelEntry | None:
    """Single-user mode (the operator set LENS_ALLOW_ANY_FOLDER=1): a box for any local model folder."""
    if not registry.any_folder_allowed():
        return None
    folder = st.sidebar.text_input("Open a model folder on this server", key=K_FOLDER, on_change=_use_folder,
                                   placeholder="/path/to/a/model/folder", persist_state="session",
                                   help="Single-user mode: any folder this server can read (ours, or a Hugging "
                                        "Face seq2seq model saved with save_pretrained).")
    if not folder.strip():
        return None
    try:
        return registry.resolve(registry.folder_key(folder))
    except KeyError:
        return None


def _chosen_entries() -> list[registry.ModelEntry]:
    """The registry's entries, plus the folder typed in single-user mode, plus the folder chosen on an earlier
    page (so that the model stays the same on every page even if the box was emptied)."""
    available = registry.entries()
    for extra in (_folder_entry(), _entry_of(st.session_state.get(K_MODEL))):
        if extra is not None and extra.key not in {e.key for e in available}:
            available = [*available, extra]
    return available


def _entry_of(key: Any) -> registry.ModelEntry | None:
    if not isinstance(key, str) or not key.startswith(registry.FOLDER_KEY):
        return None
    try:
        return registry.resolve(key)
    except KeyError:
        return None


def keep(key: str) -> Any:
    """A shared widget's value set anew before the widget is drawn (and returned). Streamlit 1.67 draws a keyed
    widget on another page (the sidebar's model box after a page switch) with its first option or an empty box
    when its value came from session state rather than from a click on it (a link, a preset, the default
    model), persist_state or not: Explore on en-fr, then Leakage lab opened on everyday-en-fr. A value set in
    the run that draws the widget is one Streamlit keeps."""
    if key in st.session_state:
        st.session_state[key] = st.session_state[key]
    return st.session_state.get(key)


def model_picker() -> tuple[str, Engine] | str:
    """Sidebar: choose a model from the registry and show its card. Returns (key, engine), or what went wrong
    and what to do about it (no model, or one that cannot be opened), for the page's main area."""
    available = _chosen_entries()
    if not available:
        return (f"No model is available. What to do: train one into checkpoints/ (`python -m model train`), or "
                f"have the server's operator name a folder in {registry.ENV_DIRS} or {registry.ENV_HF}.")
    keys = [e.key for e in available]
    was = keep(K_MODEL)
    if was not in keys:
        st.session_state[K_MODEL] = registry.default_key(available)
        if was is not None:
            st.warning(f"The model chosen before ({text(was)}) is not offered by this server any more, so this "
                       f"page shows {text(st.session_state[K_MODEL])}.")
    titles = {e.key: e.title for e in available}
    # the box shows the model's name only (a title with its description was cut at the sidebar's width); the
    # description goes on the card line under it
    names = {k: t.split(" · ")[0] for k, t in titles.items()}
    key = st.sidebar.selectbox("Model", keys, key=K_MODEL, format_func=names.get, persist_state="session",
                               help="Shipped checkpoints, plus folders and models the server's operator allows.")
    try:
        engine = get_engine(key)
    except (CheckpointError, OSError, ImportError) as exc:  # explained once, in the main area
        return (f"Cannot open the model {text(titles[key])}: {text(exc)}\n\nWhat to do: choose another model in "
                f"the sidebar; if this folder is yours, fix what the message names (or save it again with "
                f"`save_pretrained` / `python -m model train`) and reload the page.")
    head, metrics = _card_lines(engine.card)
    # the model's own name first: "en-fr · healthy" alone under everyday-en-fr read as another model
    name = text(key if not key.startswith(registry.FOLDER_KEY) else titles[key])
    about = head.replace("**", "").removeprefix(f"{name} · ")  # en-fr's pair is its name: said once
    if " · " in titles[key]:  # a shipped model's description ("English → French, real sentences (Tatoeba)")
        about = f"{text(titles[key].split(' · ', 1)[1])} · {about}"
    st.sidebar.markdown(f"**{name}** · {about} · {engine.n_encoder_layers}+{engine.n_decoder_layers} layers × "
                        f"{engine.n_heads} heads")
    if metrics:
        st.sidebar.caption(" · ".join(f"{text(metric_name(k))}: {_fmt_metric(k, v)}"
                                      for k, v in list(metrics.items())[:6]))
    return key, engine


def _apply_preset() -> None:
    p = preset(st.session_state[K_PRESET])
    if p is not None:
        st.session_state[K_SOURCE] = p["source"]
        st.session_state[K_TARGET] = p.get("target", "")


TEXT_MAX = 2000  # characters of a sentence or a reference the page runs
K_CUT = "text_cut"  # {box's key: the length of the text pasted} when a text was cut to TEXT_MAX


def _cap(key: str) -> None:
    """A text longer than TEXT_MAX keeps its first TEXT_MAX characters, and the page says so (the box has no
    maxlength: a browser ignores a whole paste that would pass one, and the box kept the old sentence)."""
    text = str(st.session_state.get(key) or "")
    if len(text) > TEXT_MAX:
        st.session_state[key] = text[:TEXT_MAX]
        st.session_state.setdefault(K_CUT, {})[key] = len(text)


def show_cut(key: str, what: str, box=None) -> None:
    """The notice of a text just cut to TEXT_MAX characters (once, under its box)."""
    length = st.session_state.get(K_CUT, {}).pop(key, None)
    if length is not None:
        (box or st).warning(f"{what} had {length:,} characters; the first {TEXT_MAX:,} are used. For a longer text, "
                            "split it into sentences (the command line's `trace --data` runs a file of them).",
                            icon=":material/content_cut:")


def _mark_custom() -> None:
    _cap(K_TARGET)
    st.session_state[K_PRESET] = CUSTOM


def _source_edited(options: list[dict[str, Any]] = ()) -> None:
    """A new sentence is no longer the preset's: neither is the preset's reference, which would otherwise be
    teacher-forced onto it. An example's own sentence typed exactly (of `options`, the model's examples) is that
    example, as a link with its sentence opens it: named in the picker, its reference taken where none is typed,
    the view left as it is (its view hint is for choosing it in the picker)."""
    ss = st.session_state
    _cap(K_SOURCE)
    p = preset(ss.get(K_PRESET, CUSTOM))
    if p is not None and ss.get(K_TARGET) == p.get("target", ""):
        ss[K_TARGET] = ""
    typed = str(ss.get(K_SOURCE, "")).strip()
    match = next((o for o in options if o["source"] == typed), None)
    if match is None:
        _mark_custom()
        return
    ss[K_PRESET] = ss[K_PRESET_SEEN] = match["id"]
    if not ss.get(K_TARGET):
        ss[K_TARGET] = match.get("target", "")


LONG_SOURCE = 120  # characters (about 20 words); a longer source gets a multi-line box


def text_inputs(engine: Engine, container=None, cols=None) -> tuple[str, str, dict[str, Any] | None]:
    """Preset picker, source and reference target (cols: two containers for the picker and the source).
    Returns (source, target, preset or None)."""
    box = container or st
    options = presets_for(engine.card)
    ids = [CUSTOM] + [p["id"] for p in options]
    linked = st.session_state.pop(K_LINKED_TEXT, False)
    if K_PRESET not in st.session_state or st.session_state[K_PRESET] not in ids:
        if linked and st.session_state.get(K_SOURCE):  # a link's sentence (a preset of another model's): kept
            st.session_state[K_PRESET] = CUSTOM
        else:
            st.session_state[K_PRESET] = ids[1] if len(ids) > 1 else CUSTOM
            _apply_preset()
    titles = {p["id"]: p["title"] for p in options} | {CUSTOM: "your own sentence"}
    keep(K_PRESET)
    cols = cols or box.columns([2, 3])
    chosen = cols[0].selectbox("Example", ids, key=K_PRESET, format_func=titles.get, on_change=_apply_preset,
                               persist_state="session")
    # The box changes kind at LONG_SOURCE characters: the new widget takes the text only if it is set anew.
    st.session_state[K_SOURCE] = st.session_state.get(K_SOURCE, "")
    long = len(st.session_state[K_SOURCE]) > LONG_SOURCE
    field = cols[1].text_area if long else cols[1].text_input
    source = field("Source sentence", key=K_SOURCE, on_change=_source_edited, args=(options,),
                   persist_state="session", **({"height": 90} if long else {}))
    show_cut(K_SOURCE, "The sentence pasted", cols[1])
    target = st.session_state.get(K_TARGET, "")
    return source, target, preset(chosen)


def target_input(container=None) -> str:
    box = container or st
    keep(K_TARGET)
    target = box.text_input("Reference target (teacher forcing)", key=K_TARGET, on_change=_mark_custom,
                            persist_state="session",
                            help="The translation the decoder is fed, one token per row, as in training.")
    show_cut(K_TARGET, "The reference pasted", box)
    return target


def shown_trace(model_key: str, source: str, target: str | None, options: DecodeOptions,
                errors: tuple[type[Exception], ...]) -> Trace | None:
    """The (cached) run with its warnings shown, or None after showing why it could not be made."""
    try:
        trace = get_trace(model_key, source, target, options)
    except errors as exc:
        st.error(str(exc))
        return None
    show_warnings(trace)
    return trace


def show_warnings(trace: Trace) -> None:
    """What the engine had to change about the input (a source longer than the model's positions was cut)."""
    for w in trace.warnings:
        if not w.startswith(services.UNKNOWN_WORDS):  # shown next to the source box (app/screens/vocabulary.py)
            st.warning(w)


def page_header(title: str, caption: str) -> tuple[str, Engine]:
    """The sidebar's model picker, then the page's title and one-line caption; stops the page, saying why and
    what to do in the main area, when no model can be opened."""
    picked = model_picker()
    st.title(title)
    st.caption(caption)
    if isinstance(picked, str):
        st.error(picked)
        st.stop()
    return picked
