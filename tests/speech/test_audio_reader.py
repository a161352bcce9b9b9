"""Reading a clip: a file of zero bytes, given as a path or as an upload's bytes, is named as empty in one line
(libsndfile alone says "Format not recognised", as for a file that is not audio)."""

from __future__ import annotations

import pytest
from attention_lens.model.audio import read_audio
from attention_lens.model.audio.reader import AudioError


def test_an_empty_file_is_named_as_empty(tmp_path):
    (tmp_path / "nothing.wav").write_bytes(b"")
    with pytest.raises(AudioError) as exc:
        read_audio(tmp_path / "nothing.wav")
    assert str(exc.value) == "nothing.wav: an empty file (0 bytes)"
    with pytest.raises(AudioError) as exc:
        read_audio(b"", name="upload.flac")
    assert str(exc.value) == "upload.flac: an empty file (0 bytes)"
