"""Only registry entries can be opened: shipped folders and the ones the operator names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from attention_lens.app import registry

APP = Path(__file__).resolve().parents[3] / "app"



def test_operator_entries_and_default(tmp_path, monkeypatch):
    a, b = tmp_path / "alpha", tmp_path / "beta"
    monkeypatch.setattr(registry, "CHECKPOINTS", tmp_path / "none")
    monkeypatch.setattr(registry, "SOURCES", [lambda: registry.shipped_entries(tmp_path / "none"),
                                              registry.operator_entries])
    monkeypatch.setenv(registry.ENV_DIRS, os.pathsep.join([str(a), "", str(b)]))
    monkeypatch.delenv(registry.ENV_DEFAULT, raising=False)
    keys = [e.key for e in registry.entries()]
    assert keys == ["alpha", "beta"]
    assert registry.default_key() == "alpha"
    monkeypatch.setenv(registry.ENV_DEFAULT, str(b))
    assert registry.default_key() == "beta"
    assert registry.resolve("beta").path == b.resolve()


def test_shipped_entries_only_list_existing_folders(tmp_path):
    for name in ("en-fr", "de-en", "elsewhere", "en-fr-no-shift"):
        (tmp_path / name).mkdir()
        if name != "en-fr-no-shift":  # still training: no config.json yet
            (tmp_path / name / "config.json").write_text("{}")
    assert [e.key for e in registry.shipped_entries(tmp_path)] == ["en-fr", "de-en"]


def test_every_shipped_checkpoint_folder_is_offered():
    """A model folder under checkpoints/ with a card (a finished training) has a label: the page offers it."""
    folders = sorted(p.name for p in registry.CHECKPOINTS.iterdir() if (p / "card.json").is_file())
    assert [f for f in folders if f not in registry.SHIPPED_LABELS] == []
    assert {e.key for e in registry.shipped_entries()} >= set(folders)


def test_repeated_names_get_distinct_keys(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "SOURCES", [registry.operator_entries])
    monkeypatch.setenv(registry.ENV_DIRS, os.pathsep.join([str(tmp_path / "x" / "m"), str(tmp_path / "y" / "m")]))
    assert [e.key for e in registry.entries()] == ["m", "m-2"]


@pytest.mark.parametrize("crafted", ["/etc", "../checkpoints/en-fr", "", "~"])
def test_paths_are_not_keys(crafted, monkeypatch):
    monkeypatch.setenv(registry.ENV_DIRS, "")
    with pytest.raises(KeyError):
        registry.resolve(crafted)


def test_engine_loader_refuses_unknown_keys(monkeypatch):
    from attention_lens.app import services

    monkeypatch.setenv(registry.ENV_DIRS, "")
    with pytest.raises(services.CheckpointError, match="not one of the models"):
        services.get_engine("/etc")
