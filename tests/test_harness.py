"""The figures every benchmark reports (harness/measure.py) and the server start/stop that tests, benchmarks and
reports share (harness/server.py)."""

from __future__ import annotations

import os
import socket
import urllib.request

import pytest

from harness.measure import cpu_seconds, percentile, rss_mb
from harness.server import app_env, free_port, served


def test_percentile_is_nearest_rank():
    values = [5.0, 1.0, 4.0, 2.0, 3.0, 10.0, 9.0, 8.0, 7.0, 6.0]  # 1..10, unordered
    assert percentile(values, 50) == 5.0  # ceil(10 * 0.5) = 5th smallest, not the interpolated 5.5
    assert percentile(values, 95) == 10.0  # ceil(9.5) = 10th
    assert percentile(values, 91) == 10.0 and percentile(values, 90) == 9.0
    assert percentile(values, 0) == 1.0 and percentile(values, 100) == 10.0
    assert percentile([7.0], 95) == 7.0
    with pytest.raises(ValueError):
        percentile([], 50)


def test_rss_and_cpu_of_this_process():
    assert 10 < rss_mb(os.getpid()) < 100_000
    before = cpu_seconds(os.getpid())
    sum(i * i for i in range(2_000_000))  # burn some CPU
    assert cpu_seconds(os.getpid()) > before


def test_free_port_can_be_bound():
    port = free_port()
    with socket.socket() as s:
        s.bind(("127.0.0.1", port))


def test_app_env_drops_lens_settings_and_names_one_model(tmp_path, monkeypatch):
    monkeypatch.setenv("LENS_SOMETHING", "x")
    assert not any(k.startswith("LENS_") for k in app_env())
    env = app_env(tmp_path, LENS_HF_MODELS="/nowhere")
    assert env["LENS_MODEL_DIRS"] == env["LENS_DEFAULT_MODEL"] == str(tmp_path.resolve())
    assert env["LENS_HF_MODELS"] == "/nowhere" and "LENS_SOMETHING" not in env


@pytest.mark.slow
def test_served_app_answers_and_stops(tiny_ckpt):
    with served(app_env(tiny_ckpt)) as (url, proc), urllib.request.urlopen(url + "/_stcore/health") as r:
        assert r.status == 200
    assert proc.poll() is not None  # stopped when the block ends
