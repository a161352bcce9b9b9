"""Explore's stepper on the page: the st.components.v2 component (app/render/stepper: stepper.js, stepper.css) fed
one packed run, and the step it reports back.

The browser steps on its own: a click on Next, a key, the slider or autoplay redraws the step bar, the picture,
the output so far and the next-token bars without a script run. The server hears the step (`step` in session
state, as the step bar's slider keeps it) when the page needs it: before any other click on the page, and after
each step while a panel that shows the step's own server-side reading is open (`sync`).

The server tells the component which step to show only when it chose one itself (a new run, a link, the tour, a
forced token, the hidden server step bar that scripted clients click): the header's `seq` changes then, and the
component keeps its own step otherwise. So the packed run's bytes stay the same from one script run to the
next while only the step changes, and Streamlit's message cache does not send them again.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import streamlit as st
from attention_lens.app.render import spectrogram
from attention_lens.app.render import stepper as packing
from attention_lens.app.screens.explore import controls as ctl

KEY = "stepper"  # the component's key (its state: {"step": n})
K_SENT = "stepper_sent"  # the step the stepper is known to show (sent by the server, or heard from it)
K_SEQ = "stepper_seq"  # raised each time the server chooses the step
K_VIEW_SENT = "stepper_view_sent"  # the view ({kind, view, layer, head}) the stepper is known to show
K_RUN_SENT = "stepper_run_sent"  # the run it was last told
K_PIN = "stepper_pin"  # the seq, step and view the header carries (_pinned)
K_HEAD_OFF = "stepper_head_off"  # what its "Switch this head off" does (set on each run)
ENCODING = "f16"  # see app/render/stepper: 2 bytes a cell, error <= 2.5e-4 for weights up to 1

# In the page's own DOM (no shadow root): its classes all start with lens-, and tests, benchmarks and screen readers
# reach it as any other part of the page.
# stepper/audio.js: the spectrogram strip and the playing of a clip, for an audio run.
COMPONENT = st.components.v2.component("attention_lens_stepper",
                                       js=packing.asset("stepper.js") + packing.asset("audio.js"),
                                       css=packing.asset("stepper.css") + packing.asset("audio.css"),
                                       isolate_styles=False)

_CACHE: OrderedDict[tuple, tuple] = OrderedDict()  # run key -> (the run as sent, encoding, packing.weights(...))
_LOCK = threading.Lock()
CACHED_RUNS = 32


def _encoded(run_key: tuple, trace) -> tuple:
    """The run as the browser gets it (an audio run's frames pooled: app/render/spectrogram), its encoding and its
    packed weights; made once per run key."""
    with _LOCK:
        if run_key in _CACHE:
            _CACHE.move_to_end(run_key)
            return _CACHE[run_key]
    audio = spectrogram.audio_source(trace) is not None
    sent = spectrogram.for_browser(trace)
    encoding = spectrogram.ENCODING if audio else ENCODING
    made = (sent, encoding, packing.weights(sent, encoding))
    with _LOCK:
        _CACHE[run_key] = made
        while len(_CACHE) > CACHED_RUNS:
            _CACHE.popitem(last=False)
    return made


def _reported() -> int | None:
    value = st.session_state.get(KEY)
    step = value.get("step") if hasattr(value, "get") else None
    return int(step) if isinstance(step, int | float) else None


def _heard() -> None:
    """The component reported its step: it is the page's step (the hidden slider's key follows)."""
    step = _reported()
    if step is not None:
        st.session_state[ctl.K_STEP] = st.session_state[ctl.K_STEP_KEEP] = st.session_state[K_SENT] = step
        st.session_state[ctl.K_PLAY] = False


def _heard_view(view=None) -> None:
    """The component reported the view on screen ({kind, view, layer, head}, switched in the browser): it is the
    page's view (the keep keys the hidden pickers, the URL, Copy link and the exports read). Values the model
    lacks are put right by the view picker (explore.controls.view_ui) on this run."""
    value = st.session_state.get(KEY)
    got = value.get("view") if view is None and hasattr(value, "get") else view
    if not hasattr(got, "get"):
        return
    ss, known = st.session_state, {}
    if got.get("kind") in ctl.KINDS:
        ss[ctl.K_KIND_KEEP] = known["kind"] = got["kind"]
    if got.get("view") in ctl.VIEWS:
        ss[ctl.K_VIEW_KEEP] = known["view"] = got["view"]
    for name, keep in (("layer", ctl.K_LAYER_KEEP), ("head", ctl.K_HEAD_KEEP)):
        if isinstance(got.get(name), int) and 0 <= got[name] < 1024:
            ss[keep] = known[name] = got[name]
    if len(known) == 4:  # what the stepper shows: no need to tell it again
        ss[K_VIEW_SENT] = known


def _head_off() -> None:
    value = st.session_state.get(KEY)
    name = value.get("head_off") if hasattr(value, "get") else None
    act = st.session_state.get(K_HEAD_OFF)
    if isinstance(name, str) and len(name) < 64 and act is not None:
        act(name)


STEP_BLOCK = "lens-at-step"  # a panel's block for one step (per_step_html)


def per_step_html(blocks: list[str]) -> str:
    """A panel's blocks for every step (blocks[t]: step t + 1) as one piece of HTML for st.html, each shown only
    while the stepper is on its step: the stepper stamps the step on screen on the page (<html data-lens-step>),
    and a CSS rule per step shows that step's block. So stepping with such a panel open sends nothing to the
    server, and the HTML is the same at every step (Streamlit sends it once)."""
    if not blocks:
        return ""
    shown = ",".join(f"html[data-lens-step='{i}'] .{STEP_BLOCK}[data-step='{i}']" for i in range(1, len(blocks) + 1))
    style = f"<style>.{STEP_BLOCK}{{display:none}}{shown}{{display:block}}</style>"
    return style + "".join(f"<div class='{STEP_BLOCK}' data-step='{i}'>{b}</div>" for i, b in enumerate(blocks, 1))


def run_id(run_key: tuple) -> str:
    return hashlib.sha1(repr(run_key).encode("utf-8")).hexdigest()[:16]


def _pinned(rid: str, step: int, view: dict) -> dict:
    """The step and view the header carries: the server's own when it chose them (a new run, a link, the tour, a
    forced token, the hidden Streamlit step bar or view pickers; `seq` rises and the component adopts them), else
    those of the last time it did, so that the packed bytes stay the same while the browser steps and switches
    views on its own (and Streamlit does not send them again). A stepper mounted afresh (its state is gone: the
    page was left) is told the server's."""
    ss = st.session_state
    chose = (ss.get(K_SENT) != step or ss.get(K_VIEW_SENT) != view or ss.get(K_RUN_SENT) != rid
             or KEY not in ss or K_PIN not in ss)
    if chose:
        ss[K_SEQ] = ss.get(K_SEQ, 0) + 1
        ss[K_SENT], ss[K_VIEW_SENT], ss[K_RUN_SENT] = step, view, rid
        ss[K_PIN] = {"seq": ss[K_SEQ], "step": step, **view}
    return ss[K_PIN]


def draw(trace, run_key: tuple, step: int, *, teacher: bool, special: frozenset[str], n_forced: int, kind: str,
         view: str, layer: int, head: int, scale: str, present: bool, picture: str, caption: str,
         sync: bool, source_share: list[float] | None = None, captions: dict[str, str] | None = None,
         notes: dict | None = None, on_head_off=None, gold: dict | None = None, samples=None) -> int:
    """The stepper for `trace` (one run, or one beam hypothesis; run_key names it with its reading) at `step`
    as the server knows it; returns that step. sync: report every step and view switch (a step-dependent panel is
    open). captions: per kind (the stepper shows the kind on screen's); notes: header fields that go with a view
    (fast_note, note, off, head_off: see stepper.js drawViews); on_head_off(name): its "Switch this head off".
    An audio run (its Trace has an audio source) goes with its spectrogram and `samples` (the clip, 16 kHz), for
    the strip under the attention and the stretch a step attends to (stepper/audio.js)."""
    ss = st.session_state
    rid = run_id(run_key)
    pin = _pinned(rid, step, {"kind": kind, "view": view, "layer": layer, "head": head})
    extra = {"run_id": rid, "seq": pin["seq"], "step": pin["step"], "kind": pin["kind"], "view": pin["view"],
             "layer": pin["layer"], "head": pin["head"], "scale": scale, "present": present, "picture": picture,
             "caption": (captions or {}).get(pin["kind"], caption), "sync": sync, "url_step": True,
             **({"captions": captions} if captions else {}), **(notes or {})}
    if source_share is not None:
        extra["source_share"] = [round(float(x), 4) for x in source_share]
    if gold:  # gold word links over the cross-attention cells (services.gold_cells), drawn by stepper.js drawGold
        extra["gold"] = gold
    sent, encoding, encoded = _encoded(run_key, trace)
    tail = b""
    if spectrogram.audio_source(sent) is not None:
        extra["audio"], tail = spectrogram.audio_tail(sent, samples, len(encoded[1]))
    blob = packing.pack(sent, encoding=encoding, special=special, n_forced=n_forced, teacher=teacher,
                        extra=extra, encoded=encoded, tail=tail)
    ss[K_HEAD_OFF] = on_head_off
    COMPONENT(key=KEY, data=blob, default={"step": step, "view": ss[K_VIEW_SENT]}, on_step_change=_heard,
              on_view_change=_heard_view, on_head_off_change=_head_off)
    return step
