"""The Heads page's "Your file": any number of lines up to the size cap (stated on the page), read as a stream
(uploads.check_upload, each bad line named), ranked over every pair in batches
(services.upload_head_ranking: per-head sums only) under a progress bar; the gold column still reaches the roles."""

from __future__ import annotations

import html

import numpy as np
import pytest
from attention_lens.app import services, uploads
from attention_lens.app.screens.heads_progress import duration, progress_text
from attention_lens.model.analysis import ablation
from attention_lens.model.analysis.ablation import rank_heads
from attention_lens.model.analysis.head_roles import head_roles
from attention_lens.model.corpora import Example
from streamlit.testing.v1 import AppTest

from harness.models.tiny import SOURCES, TARGETS
from tests.analysis.conftest import GOLDS
from tests.fixtures.apptest import ENTRY, clear_caches

REAL_RANKING = ablation.FileRanking


def _lines(n: int, gold: bool = False) -> bytes:
    cols = [(SOURCES[i % 6], TARGETS[i % 6]) + ((GOLDS[i % 6],) if gold else ()) for i in range(n)]
    return "".join("\t".join(c) + "\n" for c in cols).encode()


def _heads_page(tiny_ckpt, monkeypatch, data: bytes, name: str = "mine.tsv") -> AppTest:
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    clear_caches()
    at = AppTest.from_file(ENTRY, default_timeout=120).run()
    at.switch_page("screens/heads.py").run()
    at.session_state["heads_data"] = "file"
    at.run()
    box = at.file_uploader(key="heads_file")
    assert uploads.UPLOAD_CAP_TEXT in box.label and "any number of lines" in box.label
    box.upload(name, data, "text/tab-separated-values")
    return at.run()


class CountingRanking:
    """Stands in for FileRanking: records the sizes of the batches it is given (what the page streams) and adds up
    only the first one (a real FileRanking's figures, so that the page draws them), to keep the test quick."""

    batches: list[int] = []

    def __init__(self, engine) -> None:
        CountingRanking.batches = []
        self.real = REAL_RANKING(engine)

    def add(self, examples) -> None:
        if not self.batches:
            self.real.add(examples)
        CountingRanking.batches.append(len(examples))

    def ranking(self) -> dict:
        return self.real.ranking()

    def role_result(self) -> dict:
        return self.real.role_result()


def test_a_file_of_6000_lines_is_ranked_whole_in_small_batches(tiny_ckpt, monkeypatch):
    """Was refused: "the file has 6000 sentences; this page reads at most 5000"."""
    monkeypatch.setattr(ablation, "FileRanking", CountingRanking)
    at = _heads_page(tiny_ckpt, monkeypatch, _lines(6000), "six.tsv")
    assert not at.exception and not at.error, [e.value for e in at.error]
    at.button(key="heads_rank").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert sum(CountingRanking.batches) == 6000
    assert "heads_rank" not in [b.key for b in at.button]  # a second click would start the ranking over
    assert max(CountingRanking.batches) <= services.HEADS_BATCH
    assert any("6,000 pairs of six.tsv" in m.value for m in at.markdown)
    named = next(e for e in at.expander if "six.tsv" in e.label)
    assert "5,900 more" in " ".join(c.value for c in named.caption)  # the first 100 are listed, not 6,000


def test_an_upload_ranking_equals_the_ranking_and_roles_of_its_pairs(tiny_ckpt, tiny_engine, monkeypatch):
    """The streamed ranking adds up to the figures of rank_heads and head_roles over the same pairs, and the
    file's gold links reach the roles (a cross-attention head can be read "aligning" only against gold)."""
    data = _lines(40, gold=True)
    at = _heads_page(tiny_ckpt, monkeypatch, data)
    at.button(key="heads_rank").click().run()
    assert not at.exception and not at.error
    got = services.kept_upload_ranking(tiny_ckpt.name, uploads.check_upload(data).digest)
    pairs = [(SOURCES[i % 6], TARGETS[i % 6], GOLDS[i % 6]) for i in range(40)]
    want = rank_heads(tiny_engine, [p[0] for p in pairs], [p[1] for p in pairs], progress=False)
    assert got["ranking"]["n"] == 40 and got["ranking"]["tokens"] == want["tokens"]
    assert got["ranking"]["base_loss"] == pytest.approx(want["base_loss"], abs=1e-6)
    by_name = {(h["kind"], h["layer"], h["head"]): h["loss_increase"] for h in want["heads"]}
    for h in got["ranking"]["heads"]:
        assert h["loss_increase"] == pytest.approx(by_name[(h["kind"], h["layer"], h["head"])], abs=1e-6)
    roles = head_roles(tiny_engine, [Example(*p) for p in pairs])
    assert [r["role"] for r in got["roles"]["heads"]] == [r["role"] for r in roles["heads"]]
    cross = [r for r in got["roles"]["heads"] if r["kind"] == "cross"]
    assert cross and all(r["aligned"] is not None for r in cross)
    expected = np.array([r["aligned"] for r in roles["heads"] if r["kind"] == "cross"])
    assert np.allclose([r["aligned"] for r in cross], expected, atol=1e-9)
    assert not [i for i in at.info if "carry no gold links" in i.value]  # the no-gold note is not shown


def test_bad_lines_are_named_one_by_one_and_nothing_is_ranked(tiny_ckpt, monkeypatch):
    lines = _lines(30, gold=True).decode().splitlines()
    lines[4] = "only a source"
    lines[9] = f"{SOURCES[0]}\t{TARGETS[0]}\t0-0 9-9"
    at = _heads_page(tiny_ckpt, monkeypatch, ("\n".join(lines) + "\n").encode())
    assert not at.exception
    (error,) = [html.unescape(e.value) for e in at.error]
    assert "2 line(s) to fix" in error and "line 5: expected source<TAB>target" in error
    assert "line 10: gold links" in error
    assert "heads_rank" not in [b.key for b in at.button]


def test_the_progress_bar_says_pairs_done_rate_and_time_left():
    assert progress_text(0, 6000, 0.0) == "Ranking the heads: 0 of 6,000 pairs"
    assert progress_text(1200, 6000, 60.0) == ("Ranking the heads: 1,200 of 6,000 pairs · 20.0 pairs/s · about "
                                               "4 min 00 s left")
    assert duration(45.4) == "45 s" and duration(3725) == "1 h 02 min"


def test_on_batch_hears_every_batch_up_to_the_total(tiny_ckpt, monkeypatch):
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setattr(ablation, "FileRanking", CountingRanking)
    clear_caches()
    data = _lines(100)
    heard: list[int] = []
    services.upload_head_ranking(tiny_ckpt.name, data, uploads.check_upload(data), heard.append)
    assert heard == sorted(heard) and heard[-1] == 100 and len(heard) == len(CountingRanking.batches)
