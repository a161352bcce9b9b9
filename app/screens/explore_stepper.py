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
from attention_lens.app.render import stepper as packing
from attention_lens.app.screens import explore_controls as ctl

KEY = "stepper"  # the component's key (its state: {"step": n})
K_SENT = "stepper_sent"  # the step the stepper is known to show (sent by the server, or heard from it)
K_SEQ = "stepper_seq"  # raised each time the server chooses the step
ENCODING = "f16"  # see app/render/stepper: 2 bytes a cell, error <= 2.5e-4 for weights up to 1

# In the page's own DOM (no shadow root): its classes all start with lens-, and tests, benchmarks and screen readers
# reach it as any other part of the page.
COMPONENT = st.components.v2.component("attention_lens_stepper", js=packing.asset("stepper.js"),
                                       css=packing.asset("stepper.css"), isolate_styles=False)

_CACHE: OrderedDict[tuple, tuple[dict, bytes, float]] = OrderedDict()  # run key -> packing.weights(...)
_LOCK = threading.Lock()
CACHED_RUNS = 32


def _encoded(run_key: tuple, trace) -> tuple[dict, bytes, float]:
    with _LOCK:
        if run_key in _CACHE:
            _CACHE.move_to_end(run_key)
            return _CACHE[run_key]
    made = packing.weights(trace, ENCODING)
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


def run_id(run_key: tuple) -> str:
    return hashlib.sha1(repr(run_key).encode("utf-8")).hexdigest()[:16]


def draw(trace, run_key: tuple, step: int, *, teacher: bool, special: frozenset[str], n_forced: int, kind: str,
         view: str, layer: int, head: int, scale: str, present: bool, picture: str, caption: str,
         sync: bool, source_share: list[float] | None = None) -> int:
    """The stepper for `trace` (one run, or one beam hypothesis; run_key names it with its reading) at `step`
    as the server knows it; returns that step. sync: report every step (a step-dependent panel is open)."""
    ss = st.session_state
    if ss.get(K_SENT) != step:  # the server chose this step: the component is told to show it
        ss[K_SEQ] = ss.get(K_SEQ, 0) + 1
        ss[K_SENT] = step
    extra = {"run_id": run_id(run_key), "seq": ss.get(K_SEQ, 0), "step": step, "kind": kind, "view": view,
             "layer": layer, "head": head, "scale": scale, "present": present, "picture": picture,
             "caption": caption, "sync": sync, "url_step": True}
    if source_share is not None:
        extra["source_share"] = [round(float(x), 4) for x in source_share]
    blob = packing.pack(trace, encoding=ENCODING, special=special, n_forced=n_forced, teacher=teacher,
                        extra=extra, encoded=_encoded(run_key, trace))
    COMPONENT(key=KEY, data=blob, default={"step": step}, on_step_change=_heard)
    return step
