"""pytest fixtures over tests/fixtures: the tiny random-weight checkpoint (no training) and its engine; and the
`apptest` mark, put on every test of a module that runs the app in this process (Streamlit's AppTest, directly or
through tests/fixtures/apptest.py): those take a second or more each, and the fast loop (`./run.sh test --fast`)
leaves them out with the browser, slow, nginx and benchmark tests."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from harness.models.tiny import build_tiny_checkpoint

# The app opens on the everyday en-fr model; the suite's page tests were written around the grammar en-fr
# model's presets and gold links, so they keep it unless a test says otherwise (servers started by tests
# inherit this). tests/app/shared/test_everyday_default.py checks the real default with this variable removed.
os.environ.setdefault("LENS_DEFAULT_MODEL", "en-fr")
# AppTest runs the app in this process and browser tests start servers from it: the warm-up thread
# (app/warmup.py) would load a model and start kaleido's Chromium behind each test. Its own tests turn it on.
os.environ.setdefault("LENS_WARMUP", "0")


IN_PROCESS_APP = ("streamlit.testing", "tests.fixtures.apptest")  # AppTest, and the page tests' helpers over it


def runs_the_app_in_process(module: types.ModuleType) -> bool:
    """The module uses AppTest or a helper of tests/fixtures/apptest.py (read from its names: nothing imported)."""
    for value in vars(module).values():
        origin = value.__name__ if isinstance(value, types.ModuleType) else getattr(value, "__module__", None)
        if isinstance(origin, str) and origin.startswith(IN_PROCESS_APP):
            return True
    return False


def pytest_collection_modifyitems(config, items):
    seen: dict[str, bool] = {}
    for item in items:
        module = getattr(item, "module", None)
        if module is None:
            continue
        if module.__name__ not in seen:
            seen[module.__name__] = runs_the_app_in_process(module)
        if seen[module.__name__]:
            item.add_marker(pytest.mark.apptest)


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny")


@pytest.fixture(scope="session")
def tiny_engine(tiny_ckpt):
    from attention_lens.model.builtin.engine import BuiltinEngine

    return BuiltinEngine.load(tiny_ckpt)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    """A test that named its own model folders (LENS_MODEL_DIRS, set for its duration) is flagged while that is
    still set, so that the fixture below empties Streamlit's caches after it: engines and traces are cached by
    model name, and the next test's folder of the same name may hold another model."""
    try:
        return (yield)
    finally:
        if os.environ.get("LENS_MODEL_DIRS") and "streamlit" in sys.modules:
            from tests.fixtures import apptest

            apptest.TEST_FOLDERS_OPENED[0] = True


@pytest.fixture(autouse=True)
def _caches_emptied_after_a_test_opened_its_own_model_folders():
    """A model of a test's folder cached under a shipped model's name ("en-fr") must not be what the next test
    opens by that name."""
    yield
    from tests.fixtures import apptest

    if apptest.TEST_FOLDERS_OPENED[0]:
        apptest.clear_caches()
        apptest.TEST_FOLDERS_OPENED[0] = False
