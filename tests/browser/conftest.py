"""The browser tests' servers. `app_server(env)` starts the app (tests/support/server.py) with an environment
made by `app_env(...)` and returns its URL; a test module shares one server per environment, and every one stops
when the module ends. `shipped_server` is the app on the shipped models opening the grammar en-fr model (the
sentences the Explore tests type are its), warm-up thread off. Without Debian's Chromium both skip."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping

import pytest

from tests.fixtures.checkpoints import shipped_checkpoint
from tests.support.browser import CHROMIUM
from tests.support.server import app_env, served


@pytest.fixture(scope="module")
def app_server() -> Iterator[Callable[[Mapping[str, str]], str]]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"no Chromium at {CHROMIUM}")
    urls: dict[tuple[tuple[str, str], ...], str] = {}
    with contextlib.ExitStack() as servers:

        def start(env: Mapping[str, str]) -> str:
            key = tuple(sorted(env.items()))
            if key not in urls:
                urls[key] = servers.enter_context(served(env))[0]
            return urls[key]

        yield start


@pytest.fixture(scope="module")
def shipped_server(app_server) -> str:
    shipped_checkpoint("en-fr")
    return app_server(app_env(LENS_DEFAULT_MODEL="en-fr", LENS_WARMUP="0"))
