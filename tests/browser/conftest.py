"""The browser tests' servers. `app_server(env)` starts the app (harness/server.py) with an environment
made by `app_env(...)` and returns its URL. A server outlives the module that started it: the test process
(one xdist worker) keeps the KEPT servers used last and hands the same URL to any later module that asks for the
same environment (the shipped models' servers are asked for by most modules); the others stop when their module
ends, every one when the session ends. `shipped_server` is the app on the shipped models opening the grammar
en-fr model (the sentences the Explore tests type are its), warm-up thread off. Without Debian's Chromium both
skip."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping

import pytest

from harness.browser import CHROMIUM
from harness.server import app_env, served
from tests.fixtures.checkpoints import shipped_checkpoint

KEPT = 2  # servers kept running between modules, the most recently used first

Key = tuple[tuple[str, str], ...]


def settings(env: Mapping[str, str]) -> Key:
    """What tells two servers' environments apart: their LENS_ settings, and what else a test set differently from
    this process's environment (which libraries change as tests run: matplotlib sets MPLBACKEND)."""
    return tuple(sorted((k, v) for k, v in env.items() if k.startswith("LENS_") or os.environ.get(k) != v))


@pytest.fixture(scope="session")
def _servers() -> Iterator[dict[Key, tuple[str, contextlib.ExitStack]]]:
    """Every running server of this test process: environment -> (URL, what stops it), least recently used first."""
    running: dict[Key, tuple[str, contextlib.ExitStack]] = {}
    try:
        yield running
    finally:
        for _, stack in running.values():
            stack.close()


@pytest.fixture(scope="module")
def app_server(_servers) -> Iterator[Callable[[Mapping[str, str]], str]]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")

    def start(env: Mapping[str, str]) -> str:
        key = settings(env)
        if key not in _servers:
            stack = contextlib.ExitStack()
            _servers[key] = (stack.enter_context(served(env))[0], stack)
        _servers[key] = _servers.pop(key)  # now the most recently used
        return _servers[key][0]

    yield start
    for key in list(_servers)[:-KEPT]:
        _servers.pop(key)[1].close()


@pytest.fixture(scope="module")
def shipped_server(app_server) -> str:
    shipped_checkpoint("en-fr")
    return app_server(app_env(LENS_DEFAULT_MODEL="en-fr", LENS_WARMUP="0"))
