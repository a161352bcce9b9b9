"""The Explore page's state in the URL (names as docs/formats.md gives them): a link reproduces the page.

On a session's first run the query parameters are read into session state (each checked; a bad or stale one
is dropped with a notice and its default kept); after every run the current state is written back, so a
reload or a shared link opens the same page. Layers and heads are 1-based in the URL, 0-based in state.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

import streamlit as st
from attention_lens.app import registry, services
from attention_lens.app.screens import audio_input
from attention_lens.app.screens.explore import analysis
from attention_lens.app.screens.explore import controls as ctl
from attention_lens.app.services import CODE_OF, KIND_CODES, MODES
from attention_lens.app.state import (
    CUSTOM,
    K_LINKED_TEXT,
    K_MODEL,
    K_PRESET,
    K_PRESET_SEEN,
    K_SOURCE,
    K_TARGET,
    TEXT_MAX,
    presets,
)

VIEWS = ("grid", "layer", "head", "mean")
ORDER = ("model", "text", "clip", "target", "mode", "beam", "temperature", "top_k", "seed", "src_lang", "tgt_lang",
         "language", "task", "step",
         "kind", "view",
         "layer", "head", "reading", "forced", "off", "present")
K_READ, K_NOTICES, K_PENDING_STEP = "url_read", "url_notices", "url_step"
K_PENDING_FORCED, K_PENDING_OFF = "url_forced", "url_off"  # applied once the run and the model are known
K_WRITTEN = "url_written"  # the query parameters a page last wrote: the same ones are no link to read
K_VIEW_ASKED = "view_asked"  # a link, preset hint or tour stop named the view: it wins over Explore's default
LINKED = "(link)"
K_BEAM_SIZE, K_TEMPERATURE, K_TOP_K, K_SEED = "beam_size", "temperature", "sample_top_k", "seed"


def _number(raw: str, cast, lo, hi):
    value = cast(raw)
    if not lo <= value <= hi:
        raise ValueError(f"outside {lo}..{hi}")
    return value


def _one_of(raw: str, allowed) -> str:
    if raw not in allowed:
        raise ValueError(f"not one of {', '.join(allowed)}")
    return raw


WHAT = {"text": ("text", "sentence"), "target": ("reference target", "target")}


class TooLong(ValueError):
    """A link's text longer than TEXT_MAX: its notice says how long, the limit, and what to do."""

    def __init__(self, length: int):
        super().__init__(f"longer than {TEXT_MAX} characters")
        self.length = length

    def notice(self, name: str) -> str:
        what, default = WHAT.get(name, (f"`{name}`", "value"))
        return (f"**The link's {what} is too long:** {self.length:,} characters, and a page takes at most "
                f"{TEXT_MAX:,}. The default {default} is shown instead. To look at that text, paste a part of it "
                f"(a sentence or a few) into the text box, or make the link again from a shorter text.")


def _text(raw: str, empty_ok: bool) -> str:
    if len(raw) > TEXT_MAX:
        raise TooLong(len(raw))
    if not (empty_ok or raw.strip()):
        raise ValueError("empty")
    return raw


def _ids(raw: str) -> tuple[int, ...]:
    ids = tuple(int(x) for x in raw.split(",") if x.strip())
    if not ids or len(ids) > 512 or min(ids) < 0:
        raise ValueError("not a list of token ids")
    return ids


def _heads(raw: str) -> tuple[str, ...]:
    names = tuple(dict.fromkeys(x.strip() for x in raw.split(",") if x.strip()))
    for name in names:
        kind, layer, head = name.split(":")
        if kind not in KIND_CODES or int(layer) < 1 or int(head) < 1:
            raise ValueError(f"{name} is not a head (kind:layer:head)")
    return names


def apply(params: dict[str, str]) -> list[str]:
    """Put a link's state into session state; returns a notice per parameter that could not be used.
    The model, layer and head ranges are checked later, against the engine (check_ranges)."""
    ss, notices = st.session_state, []
    rules = {
        "model": (K_MODEL, lambda r: _one_of(r, [e.key for e in registry.entries()])),
        "text": (K_SOURCE, lambda r: _text(r, False)),
        "target": (K_TARGET, lambda r: _text(r, True)),
        "mode": (ctl.K_MODE, lambda r: _one_of(r, MODES)),
        "beam": (K_BEAM_SIZE, lambda r: _number(r, int, 1, 8)),
        "temperature": (K_TEMPERATURE, lambda r: round(_number(r, float, 0.1, 2.0), 1)),
        "top_k": (K_TOP_K, lambda r: _number(r, int, 0, 100)),
        "seed": (K_SEED, lambda r: _number(r, int, 0, 10_000)),
        "src_lang": (ctl.K_SRC_LANG, lambda r: _text(r, False)[:40]),  # checked against the model's codes
        "tgt_lang": (ctl.K_TGT_LANG, lambda r: _text(r, False)[:40]),  # where the boxes are drawn
        "clip": (audio_input.K_CLIP, lambda r: _one_of(r, audio_input.preset_ids())),  # a speech model's clip
        "language": (audio_input.K_LANGUAGE, lambda r: _text(r, False)[:40]),  # checked against the model's codes
        "task": (audio_input.K_TASK, lambda r: _one_of(r, tuple(audio_input.TASKS))),
        "step": (K_PENDING_STEP, lambda r: _number(r, int, 1, 10_000)),
        "kind": (ctl.K_KIND_KEEP, lambda r: KIND_CODES[_one_of(r, tuple(KIND_CODES))]),
        "view": (ctl.K_VIEW_KEEP, lambda r: _one_of(r, VIEWS)),
        "layer": (ctl.K_LAYER_KEEP, lambda r: _number(r, int, 1, 64) - 1),
        "head": (ctl.K_HEAD_KEEP, lambda r: _number(r, int, 1, 64) - 1),
        "reading": (analysis.K_READING_KEEP, lambda r: _one_of(r, tuple(analysis.READINGS))),
        "forced": (K_PENDING_FORCED, _ids),
        "off": (K_PENDING_OFF, _heads),
        "present": (ctl.K_PRESENT, lambda r: _one_of(r, ("0", "1")) == "1"),
    }
    for name, raw in params.items():
        if name not in rules:
            notices.append(f"`{name}` is not a link parameter of this page; ignored.")
            continue
        key, parse = rules[name]
        try:
            ss[key] = parse(raw)
            ss[K_VIEW_ASKED] = ss.get(K_VIEW_ASKED, False) or name == "view"
        except TooLong as exc:
            notices.append(exc.notice(name))
        except (ValueError, KeyError) as exc:
            notices.append(f"`{name}={raw[:40]}` cannot be used ({exc or 'not valid'}); the default is shown.")
    if ss.get(ctl.K_PRESENT) and params.get("present") == "1" and "view" not in params:
        ss[ctl.K_VIEW_KEEP] = "head"  # presenter mode opens on one head, as its toggle does
    if "text" in params and K_SOURCE in ss:
        match = next((p for p in presets() if p["source"] == ss[K_SOURCE]), None)
        ss[K_PRESET] = ss[K_PRESET_SEEN] = match["id"] if match else CUSTOM  # the link's view, not the hint
        ss[K_LINKED_TEXT] = True  # kept even where that preset is not the model's (state.text_inputs)
        if "target" not in params:
            ss[K_TARGET] = match.get("target", "") if match else ""
    return notices


def read_once() -> None:
    """On the session's first run: the URL's state into session state, notices kept for the page."""
    if st.session_state.get(K_READ):
        return
    st.session_state[K_READ] = True
    params = st.query_params.to_dict()
    if params == st.session_state.get(K_WRITTEN):  # another page's state, not a link to this one
        return
    st.session_state[K_NOTICES] = apply(params)
    if params and K_PRESET_SEEN not in st.session_state:  # a link's view is not replaced by the preset's hint
        st.session_state[K_PRESET_SEEN] = LINKED


def check_ranges(n_layers: int, n_heads: int) -> None:
    """A layer or head the chosen model does not have (a stale link) goes back to 1, with a notice."""
    for key, n, name in ((ctl.K_LAYER_KEEP, n_layers, "layer"), (ctl.K_HEAD_KEEP, n_heads, "head")):
        if st.session_state.get(key, 0) >= n:
            st.session_state.setdefault(K_NOTICES, []).append(
                f"This model has {n} {name}s; {name} {st.session_state[key] + 1} from the link is shown as 1.")
            st.session_state[key] = 0


def apply_pending(model_key: str, engine, vocabulary: int) -> None:
    """A link's forced tokens (for sync_run, which starts the run with them) and switched-off heads, once the
    model is known: ids past its vocabulary, or heads it does not have, are dropped with a notice."""
    ss = st.session_state
    forced = ss.get(K_PENDING_FORCED)
    if forced and max(forced) >= vocabulary:
        ss.setdefault(K_NOTICES, []).append("`forced` names tokens this model does not have; nothing is forced.")
        ss.pop(K_PENDING_FORCED)
    off = ss.pop(K_PENDING_OFF, None)
    if off is not None:
        known = services.head_names(engine)
        if unknown := [h for h in off if h not in known]:
            ss.setdefault(K_NOTICES, []).append(f"This model has no head {', '.join(unknown)}; it is left on.")
        analysis.set_ablated(model_key, tuple(h for h in off if h in known))


def show_notices() -> None:
    for note in st.session_state.pop(K_NOTICES, []):
        st.warning(note, icon=":material/link_off:")


def current(model_key: str, source: str, target: str | None, mode: str, step: int, kind: str, view: str,
            layer: int, head: int) -> dict[str, str]:
    ss = st.session_state
    heard = ss.get(audio_input.K_HEARD) if source.startswith(audio_input.CLIP_LABEL) else None
    p: dict[str, Any] = {"model": model_key}
    if heard is None:
        p["text"] = source
    elif heard["clip"].preset:  # a shipped clip; an upload or a recording cannot travel in a link
        p["clip"] = heard["clip"].preset
    if mode == "teacher_forced":
        p["target"] = target or ""
    p["mode"] = mode
    if mode == "beam":
        p["beam"] = ss.get(K_BEAM_SIZE, 4)
    if mode == "sample":
        p |= {"temperature": ss.get(K_TEMPERATURE, 1.0), "top_k": ss.get(K_TOP_K, 0), "seed": ss.get(K_SEED, 0)}
    for name, key in (("src_lang", ctl.K_SRC_LANG), ("tgt_lang", ctl.K_TGT_LANG)):
        if ss.get(key):  # a multilingual model's languages (explore.controls.decoding_ui)
            p[name] = ss[key]
    if heard is not None:  # a speech model's language and task (audio_input.speech_options_ui)
        p |= {name: ss[key] for name, key in (("language", audio_input.K_LANGUAGE), ("task", audio_input.K_TASK))
              if ss.get(key)}
    p |= {"step": step, "kind": CODE_OF[kind], "view": view, "layer": layer + 1, "head": head + 1,
          "present": int(bool(ss.get(ctl.K_PRESENT)))}
    if ss.get(analysis.K_READING_KEEP, "weights") != "weights":
        p["reading"] = ss[analysis.K_READING_KEEP]
    if mode != "teacher_forced" and ss.get(ctl.K_FORCED):
        p["forced"] = ",".join(str(i) for i in ss[ctl.K_FORCED])
    if off := analysis.ablated(model_key):
        p["off"] = ",".join(off)
    return {k: str(p[k]) for k in ORDER if k in p}


def write(params: dict[str, str]) -> str:
    """The state into the address bar; returns the link to it."""
    if st.query_params.to_dict() != params:
        st.query_params.from_dict(params)
    st.session_state[K_WRITTEN] = params
    base = (st.context.url or "").split("?")[0]
    return f"{base}?{urlencode(params)}"
