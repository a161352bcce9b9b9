"""Two runs under one step bar that steps in the browser (app/render/stepper/pair.js): Compare's two sides with
their difference, and the Leakage lab's teacher forcing against free running. The component is Explore's stepper
(app/screens/explore/stepper) fed a pair: each run packed as Explore packs one (the whole run once), so a click
on the bar, a key or the slider redraws both runs, the line of the step and the difference without a script run.

The server hears the step as Explore's does: just before any other click on the page, into `step_key` (the
session key of the hidden server-side step widget that scripted clients and AppTest still set). It tells the
component a step only when it chose one (new runs, a link, that hidden widget): the header's `seq` changes then.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import streamlit as st
from attention_lens.app.render import spectrogram
from attention_lens.app.render import stepper as packing
from attention_lens.app.screens.explore import stepper as explore_stepper

# Explore's stepper with pair.js appended (one module: the same drawing of a run, the same keys and step bar).
COMPONENT = st.components.v2.component("attention_lens_pair_stepper", js=packing.script(), css=packing.styles(),
                                       isolate_styles=False)
_CACHE: OrderedDict[tuple, tuple] = OrderedDict()  # run key -> (the run as sent, packing.weights(...))
_LOCK = threading.Lock()
CACHED_RUNS = 32

# The server-side step widgets stay on the page for scripted clients, hidden (the component is the step bar).
HIDE = """<style>.st-key-cmp_server_steps,[data-testid=stLayoutWrapper]:has(> .st-key-cmp_server_steps),
.st-key-exp_server_steps,[data-testid=stLayoutWrapper]:has(> .st-key-exp_server_steps){display:none}</style>"""
# A − B on the diverging scale Compare's plotly difference used (plotly's RdBu: red, B put more weight there;
# white, equal; blue, A did), as the stops pair.js draws with.
DIVERGING = [[0.0, "#67001f"], [0.1, "#b2182b"], [0.2, "#d6604d"], [0.3, "#f4a582"], [0.4, "#fddbc7"],
             [0.5, "#f7f7f7"], [0.6, "#d1e5f0"], [0.7, "#92c5de"], [0.8, "#4393c3"], [0.9, "#2166ac"],
             [1.0, "#053061"]]


@dataclass(frozen=True)
class Side:
    """One run of the pair: its Trace, the key it is cached under, and how it was decoded; a clip's run also its
    samples (16 kHz), for the stepper's players (stepper/audio.js)."""

    trace: object
    run_key: tuple
    teacher: bool = False
    special: frozenset[str] = frozenset()
    samples: np.ndarray | None = None


def encoded(run_key: tuple, trace) -> tuple:
    """The run as the browser gets it (a clip's frames pooled: app/render/spectrogram.for_browser) and its
    packing.weights, kept for the run's next script runs (the costly part of packing)."""
    with _LOCK:
        if run_key in _CACHE:
            _CACHE.move_to_end(run_key)
            return _CACHE[run_key]
    sent = spectrogram.for_browser(trace)
    made = (sent, packing.weights(sent, explore_stepper.ENCODING))
    with _LOCK:
        _CACHE[run_key] = made
        while len(_CACHE) > CACHED_RUNS:
            _CACHE.popitem(last=False)
    return made


def hide_server_steps() -> None:
    st.html(HIDE)


def _heard(key: str, step_key: str) -> None:
    value = st.session_state.get(key)
    step = value.get("step") if hasattr(value, "get") else None
    if isinstance(step, int | float):
        st.session_state[step_key] = st.session_state[f"{key}_sent"] = int(step)


def draw(key: str, sides: Sequence[Side], step: int, step_key: str, *, m: int, kind: str, view: str, layer: int,
         head: int, titles: Sequence[Sequence[str]], caption: str = "", notes: list[dict] | None = None,
         mark_row: int | None = None, diff_title: str | None = None, diff_range: float = 1.0,
         url_step: bool = True) -> int:
    """The pair at `step` (1..m, as the server knows it) under the component's key `key`; each side shows
    min(step, its m). view: "head" (layer, head 0-based) or "layer_mean"; diff_title: draw A − B of the first
    two sides where the tokens match, its colours fixed from -diff_range to +diff_range; notes: one line per
    step; mark_row: a row marked once reached. A clip's run goes with its spectrogram and samples (its strip
    under the keys and its players, as on Explore). The step the page reports goes to session key `step_key`.
    Returns step."""
    ss = st.session_state
    sent, seq = f"{key}_sent", f"{key}_seq"
    if ss.get(sent) != step:  # the server chose this step: the component is told to show it
        ss[seq] = ss.get(seq, 0) + 1
        ss[sent] = step
    blobs = []
    for side in sides:
        extra = {"run_id": explore_stepper.run_id(side.run_key), "seq": 0, "step": 1, "kind": kind, "view": view,
                 "layer": layer, "head": head, "scale": "fixed", "present": False, "picture": "attention",
                 "caption": caption, "sync": False, "url_step": False}
        sent, weights = encoded(side.run_key, side.trace)
        tail = b""
        if spectrogram.audio_source(sent) is not None:
            extra["audio"], tail = spectrogram.audio_tail(sent, side.samples, len(weights[1]))
        blobs.append(packing.pack(sent, encoding=explore_stepper.ENCODING, special=side.special,
                                  teacher=side.teacher, extra=extra, encoded=weights, tail=tail))
    header = {"run_id": explore_stepper.run_id(tuple(side.run_key for side in sides)), "seq": ss.get(seq, 0),
              "step": step, "m": m, "titles": [list(t) for t in titles], "notes": notes, "mark_row": mark_row,
              "diff": {"title": diff_title, "colours": DIVERGING, "range": diff_range} if diff_title else None,
              "url_step": url_step,
              "sync": False, "present": False}
    COMPONENT(key=key, data=packing.pack_pair(blobs, header), default={"step": step},
                              on_step_change=lambda: _heard(key, step_key))
    return step
