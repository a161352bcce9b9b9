"""First-time costs paid before a visitor waits for them (issue 27).

Three clicks used to be slow the first time on a fresh server, whoever made them: the first PNG export (kaleido
starts its Chromium), the first "switch this head off" (an ablated decode, and the first plotly bar chart:
plotly imports its validators and JSON encoder lazily), and the Leakage lab's first plot (a teacher-forced run
with the switches off, its meter, and the lab's plotly figures). `start` runs each once, on a background thread,
when the server's first page is drawn (Streamlit has no earlier hook that can load a model), for the default
model and its first preset; the visitor's own clicks then find kaleido running, the code imported and the
model loaded. benchmarks/first_costs.py measures each click with and without it (LENS_WARMUP=0 turns it off).
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import replace

import numpy as np
import plotly.io as pio
import streamlit as st

from app import exports, registry, services, state
from app.render import contrib, figures, views
from app.render import leakage as lf

ENV = "LENS_WARMUP"
DELAY_S = 1.0  # after the first page's script started: its own first draw goes first
log = logging.getLogger(__name__)


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


@st.cache_resource(max_entries=1, show_spinner=False)
def start() -> threading.Thread | None:
    """Once per server process: the warm-up thread (None when switched off)."""
    if not enabled():
        return None
    thread = threading.Thread(target=_run, name="lens-warmup", daemon=True)
    thread.start()
    return thread


def _run() -> None:
    time.sleep(DELAY_S)
    for step in (_export, _switch_off, _leakage):
        began = time.perf_counter()
        try:
            step()
        except Exception:  # a warm-up that fails costs the visitor the first-time wait, never the page
            log.warning("warm-up %s failed", step.__name__, exc_info=True)
        log.info("warm-up %s: %.2f s", step.__name__, time.perf_counter() - began)


def _sentence() -> tuple[str, object, str, str]:
    key = registry.default_key()
    engine = services.get_engine(key)
    preset = next((p for p in state.presets_for(engine.card) if p.get("target")), None)
    source, target = (preset["source"], preset["target"]) if preset else ("the cat sat .", "le chat s' assit .")
    return key, engine, source, target


def _export() -> None:
    """Kaleido's browser started and one picture rendered (exports.image keeps the server for the process)."""
    if exports.image_export_available():
        w = np.full((2, 3), 1 / 3)
        exports.image(figures.heatmap(w, figures.labels("ab"), figures.labels("xyz")), "png", title="warm-up")


def _switch_off() -> None:
    """An ablated decode and the probability chart the page draws with it."""
    _, engine, source, _ = _sentence()
    base = services.DecodeOptions()
    plain = engine.trace(source, options=base)
    off = engine.trace(source, options=replace(base, ablate=("cross:1:1",), forced=tuple(s.id for s in plain.steps),
                                               max_len=plain.m))
    pio.to_json(contrib.ablation_probs(list(plain.target_tokens), [s.prob for s in plain.steps],
                                       [s.prob for s in off.steps]))


def _leakage() -> None:
    """The Leakage lab's first view: the switched teacher-forced run, its meter and figures."""
    _, engine, source, target = _sentence()
    trace = engine.trace(source, target=target, options=services.DecodeOptions(mode="teacher_forced", causal=False,
                                                                              shift=False))
    meter = services.measure(trace)
    pio.to_json(views.attention_figure(trace, "decoder_self_attention", "grid", trace.m))
    pio.to_json(lf.head_heatmap(meter.mean_future, "warm-up"))
    pio.to_json(lf.row_bars(figures.row_labels(trace.decoder_input_tokens, trace.target_tokens),
                            meter.future.max(axis=(0, 1)), meter.own_answer.max(axis=(0, 1))))
