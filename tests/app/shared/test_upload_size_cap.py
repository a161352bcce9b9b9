"""The upload screens state their size cap and refuse a bigger file in one message that names it, before reading
a line of it (the Alignment page's "Your test file" and the Heads page's "Your file")."""

from __future__ import annotations

from attention_lens.app import uploads
from streamlit.testing.v1 import AppTest

from harness.models.tiny import SOURCES, TARGETS
from tests.fixtures.apptest import ALIGNMENT, ENTRY, page_on


def _over_the_cap() -> bytes:
    line = f"{SOURCES[0]}\t{TARGETS[0]}\n".encode()
    return line * (uploads.UPLOAD_MAX_BYTES // len(line) + 2)


def _one_error_naming_the_cap(at: AppTest, name: str) -> None:
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert uploads.UPLOAD_CAP_TEXT in errors[0] and name in errors[0] and "\n" not in errors[0]
    assert not at.warning, [w.value for w in at.warning]  # no "use the first N sentences" offer: nothing was read


def test_alignment_upload_states_the_cap_and_refuses_a_bigger_file(tiny_ckpt, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [tiny_ckpt], preset="custom")
    box = at.file_uploader(key="align_upload")
    assert uploads.UPLOAD_CAP_TEXT in box.label
    data = _over_the_cap()
    assert len(data) > uploads.UPLOAD_MAX_BYTES
    box.upload("big.tsv", data, "text/tab-separated-values")
    at.run()
    _one_error_naming_the_cap(at, "big.tsv")


def test_heads_upload_states_the_cap_and_refuses_a_bigger_file(tiny_ckpt, monkeypatch):
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    at = AppTest.from_file(ENTRY, default_timeout=120).run()
    at.switch_page("screens/heads.py").run()
    at.session_state["heads_data"] = "file"
    at.run()
    box = at.file_uploader(key="heads_file")
    assert uploads.UPLOAD_CAP_TEXT in box.label
    box.upload("big.tsv", _over_the_cap(), "text/tab-separated-values")
    at.run()
    _one_error_naming_the_cap(at, "big.tsv")
    assert "heads_rank" not in [b.key for b in at.button]  # nothing to rank
