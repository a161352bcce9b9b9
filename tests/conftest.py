"""pytest fixtures over tests/fixtures: the tiny random-weight checkpoint (no training) and its engine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.fixtures.checkpoints import SOURCES, TARGETS, build_tiny_checkpoint

__all__ = ["ROOT", "SOURCES", "TARGETS", "build_tiny_checkpoint"]

ROOT = Path(__file__).resolve().parent.parent
# AppTest runs the app in this process and browser tests start servers from it: the warm-up thread
# (app/warmup.py) would load a model and start kaleido's Chromium behind each test. Its own tests turn it on.
os.environ.setdefault("LENS_WARMUP", "0")


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny")


@pytest.fixture(scope="session")
def tiny_engine(tiny_ckpt):
    from model.builtin.engine import BuiltinEngine

    return BuiltinEngine.load(tiny_ckpt)
