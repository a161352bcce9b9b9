"""`attention_lens.launch run` imports the app's heavy modules on a thread while Streamlit starts its server, so
the first visitor's page does not wait for torch, the model code and plotly; LENS_WARMUP=0 turns it off."""

from __future__ import annotations

import sys

from attention_lens import launch


def test_the_app_is_imported_on_a_thread_unless_the_warm_up_is_off(monkeypatch):
    monkeypatch.setenv("LENS_WARMUP", "0")
    assert launch.import_app_early() is None
    monkeypatch.setenv("LENS_WARMUP", "1")
    thread = launch.import_app_early()
    assert thread is not None and thread.daemon
    thread.join(timeout=120)
    assert not thread.is_alive()
    assert "attention_lens.app.warmup" in sys.modules and "torch" in sys.modules
