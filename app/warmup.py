"""First-time costs paid before a visitor waits for them.

Three clicks used to be slow the first time on a fresh server, whoever made them: the first PNG export (kaleido
starts its Chromium), the first "switch this head off" (an ablated decode, and the first plotly bar chart:
plotly imports its validators and JSON encoder lazily), and the Leakage lab's first plot (a teacher-forced run
with the switches off, its meter, and the lab's plotly figures). `start` runs each once, on a background thread,
for the default model and its first preset; the visitor's own clicks then find kaleido running, the code imported
and the model loaded. benchmarks/first_costs.py measures each click with and without it (LENS_WARMUP=0 turns it
off).

The first page is not made to wait for it: on a 2-core server a thread started with the first page's script (1 s
in) made that page about a second slower (benchmarks/RESULTS.md). So `start` is called once the first page's
script run has ended (app/streamlit_app.py), and before each of its pieces the thread waits until no page's script
is running (`script_run` counts them) and the last one ended QUIET_S ago: the browser's own drawing of that page
goes first. After the export piece the thread lowers its own scheduling priority (NICE, per thread on Linux), so
the Python pieces yield the cores to a visitor's click that comes while they run (a step click reruns only
Explore's fragment, which `script_run` does not see); the export goes first at normal priority because kaleido's
browser, started by it, keeps the priority of the thread that started it for the server's life.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import plotly.io as pio
import streamlit as st
from attention_lens.app import exports, registry, services, state
from attention_lens.app.render import contrib, figures, views
from attention_lens.app.render import leakage as lf

ENV = "LENS_WARMUP"
QUIET_S = 2.0  # no page's script has run for this long before a piece starts (the page has been sent and drawn)
NICE = 19  # the thread's niceness after the export piece
log = logging.getLogger(__name__)

_runs = 0  # page script runs going on now
_last_end = 0.0  # time.monotonic() when the last one ended
_changed = threading.Condition()


def enabled() -> bool:
    return os.environ.get(ENV, "1") != "0"


@contextlib.contextmanager
def script_run() -> Iterator[None]:
    """Around a page's script run (app/streamlit_app.py): the warm-up starts no piece while one is going on."""
    global _runs, _last_end
    with _changed:
        _runs += 1
    try:
        yield
    finally:
        with _changed:
            _runs -= 1
            _last_end = time.monotonic()
            _changed.notify_all()


def wait_quiet(quiet: float | None = None) -> None:
    """Return once no page's script is running and the last one ended `quiet` (default QUIET_S) seconds ago."""
    quiet = QUIET_S if quiet is None else quiet
    with _changed:
        while True:
            left = _last_end + quiet - time.monotonic()
            if _runs == 0 and left <= 0:
                return
            _changed.wait(None if _runs else left)


def lower_priority(nice: int = NICE) -> None:
    """This thread (alone, on Linux) at niceness `nice`; elsewhere, or if the system refuses, nothing."""
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), nice)
    except (AttributeError, OSError):
        log.info("warm-up: could not lower the thread's priority", exc_info=True)


@st.cache_resource(max_entries=1, show_spinner=False)
def start() -> threading.Thread | None:
    """Once per server process, after its first page's script run: the warm-up thread (None when switched off)."""
    if not enabled():
        return None
    thread = threading.Thread(target=_run, name="lens-warmup", daemon=True)
    thread.start()
    return thread


def _run() -> None:
    for step in (_export, _switch_off, _leakage):
        wait_quiet()
        if step is not _export:
            lower_priority()
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
