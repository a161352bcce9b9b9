"""app/warmup.py: the first-time costs (issue 27) are paid by a background thread once per server, and can be
switched off (LENS_WARMUP=0, as the test suite does)."""

from __future__ import annotations

from app import warmup
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
