"""A Marian folder without its target.spm is refused in one line that names the file (it said "Either
model_file or model_proto must be specified", sentencepiece's words)."""

from __future__ import annotations

import pytest
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.loader import load_engine

from harness.models.hf_tiny import build_marian


def test_a_marian_folder_without_target_spm_names_the_file(tmp_path):
    folder = build_marian(tmp_path / "marian")
    (folder / "target.spm").unlink()
    if (folder / "tokenizer.json").exists():
        (folder / "tokenizer.json").unlink()
    with pytest.raises(CheckpointError) as err:
        load_engine(str(folder))
    message = str(err.value)
    assert "target.spm" in message and "model_proto" not in message and "\n" not in message
