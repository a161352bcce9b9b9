"""app/warmup.py: the first-time costs are paid by a background thread once per server, and can be
switched off (LENS_WARMUP=0, as the test suite does)."""

from __future__ import annotations

import os
import threading
import time

from attention_lens.app import warmup

from tests.fixtures.checkpoints import shipped_checkpoint


def test_switched_off_it_starts_nothing(monkeypatch):
    monkeypatch.setenv(warmup.ENV, "0")
    warmup.start.clear()
    assert warmup.start() is None


def test_the_switch_off_and_leakage_steps_run_on_the_default_model(monkeypatch):
    for name in ("LENS_MODEL_DIRS", "LENS_DEFAULT_MODEL", "LENS_HF_MODELS"):
        monkeypatch.delenv(name, raising=False)
    shipped_checkpoint(warmup.registry.default_key())
    calls = []
    real = warmup.services.get_engine
    monkeypatch.setattr(warmup.services, "get_engine", lambda key: (calls.append(key), real(key))[1])
    warmup._switch_off()
    warmup._leakage()
    assert calls == [warmup.registry.default_key()] * 2


def test_one_thread_per_server(monkeypatch):
    monkeypatch.setenv(warmup.ENV, "1")
    ran = []
    monkeypatch.setattr(warmup, "_run", lambda: ran.append(1))
    warmup.start.clear()
    first, second = warmup.start(), warmup.start()
    first.join(5)
    assert first is second and ran == [1]
    warmup.start.clear()


def test_no_piece_starts_before_the_first_page_has_run(monkeypatch):
    """The first page's script run is over before the warm-up's first piece starts (a thread started 1 s into it
    made the first page about a second slower on 2 cores), and the pieces after the export run at a lower priority."""
    from attention_lens.app.screens import charts

    from tests.fixtures.apptest import shipped_app

    monkeypatch.setenv(warmup.ENV, "1")
    monkeypatch.setattr(warmup, "QUIET_S", 1.0)
    started = []
    for name in ("_export", "_switch_off", "_leakage"):
        monkeypatch.setattr(warmup, name, lambda name=name: started.append(
            (name, time.monotonic(), os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))))
    real = charts.draw
    monkeypatch.setattr(charts, "draw", lambda *a, **k: (time.sleep(1.5), real(*a, **k))[1])  # a slow first page
    warmup.start.clear()
    try:
        at = shipped_app(monkeypatch).run()
        ended = warmup._last_end  # when the page's script run ended (AppTest returns later: 1 ms to 1 s under load)
        assert not at.exception and ended > 0
        warmup.start().join(20)  # the thread the page started (cached: the same one)
        assert [s[0] for s in started] == ["_export", "_switch_off", "_leakage"]
        assert started[0][1] >= ended, f"the warm-up began {ended - started[0][1]:.2f} s before the page's run ended"
        base = os.getpriority(os.PRIO_PROCESS, 0)
        assert started[0][2] == base  # kaleido's browser, started by the export, keeps the server's priority
        assert started[1][2] == started[2][2] == max(base, warmup.NICE)
    finally:
        warmup.start.clear()


def test_a_piece_waits_while_a_page_runs():
    done = threading.Event()
    with warmup.script_run():
        threading.Thread(target=lambda: (warmup.wait_quiet(0.5), done.set()), daemon=True).start()
        assert not done.wait(1.0)  # a page's script is running
    assert not done.wait(0.2)  # it has just ended
    assert done.wait(5)
