"""pytest fixtures over tests/fixtures: the tiny random-weight checkpoint (no training) and its engine."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixtures.checkpoints import SOURCES, TARGETS, build_tiny_checkpoint

__all__ = ["ROOT", "SOURCES", "TARGETS", "build_tiny_checkpoint"]

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def tiny_ckpt(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("tiny") / "tiny")


@pytest.fixture(scope="session")
def tiny_engine(tiny_ckpt):
    from model.builtin.engine import BuiltinEngine

    return BuiltinEngine.load(tiny_ckpt)
