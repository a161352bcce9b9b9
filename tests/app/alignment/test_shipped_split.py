"""The Alignment page without an upload: a model whose language pair ships a gold test split gets what an uploaded
file gets on that split's first sentences: sentences worst first (their summed counts give the chosen head's
AER), a sentence's word matrix with its gold, the breakdown, and Explore with the gold."""

from __future__ import annotations

from pathlib import Path

import pytest
from attention_lens.model.analysis.alignment import Counts

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, page_on
from tests.fixtures.drawings import drawings, texts


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_shipped") / "en-fr")


def test_the_test_split_gets_sentences_worst_first_a_word_matrix_and_the_breakdown(model, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [model], preset="custom", source=SOURCES[0], target=TARGETS[0],
                 align_n=20, timeout=600)
    assert not at.exception
    assert not _has(at, "align_upload_worst")  # nothing aligned until asked
    at.checkbox(key="align_shipped").set_value(True).run()
    assert not at.exception
    table = at.dataframe(key="align_upload_worst").value
    assert len(table) > 50  # of the split's first 100 sentences (a few may not line up with the tiny vocabulary)
    assert list(table["AER"]) == sorted(table["AER"], reverse=True)
    assert "en-fr.test.tsv" in " ".join(c.value for c in at.caption)
    head = at.selectbox(key="align_upload_head").value
    layer, number = (int(x) for x in head[1:].split("H"))
    from attention_lens.model.analysis.alignment import Method, align_upload, parse_tsv
    from attention_lens.model.builtin.engine import BuiltinEngine

    from tests.fixtures.checkpoints import ROOT

    lines = (ROOT / "assets" / "data" / "en-fr.test.tsv").read_text(encoding="utf-8").splitlines(True)[:100]
    report = align_upload(BuiltinEngine.load(model), parse_tsv("".join(lines))[0])
    chosen = Method.parse("union-plain-mean")  # the page's default extraction and reading, on the head shown
    chosen = Method(chosen.extract, chosen.reading, layer, number)
    total = sum((Counts(int(r.predicted), int(r.sure), 0, int(r.right)) for r in table.itertuples()), Counts())
    assert total.precision == pytest.approx(report.tally[chosen].precision)  # summed counts, as the file's
    worst = int(table["line"][0]) - 1
    at.session_state["align_upload_sentence"] = worst  # what a click on the table's first row sets
    at.run()
    assert not at.exception
    titled = [texts(svg)[0] for svg in drawings(at).values()]
    assert any(t.startswith(f"Sentence {worst + 1} · word matrix") for t in titled)
    bodies = [h.proto.body for h in at.get("html")]
    assert any("By token class" in b for b in bodies) and any("By reordering distance" in b for b in bodies)
    # the button sets the sidebar's model and Explore's keys in its on_click (set in the script run after the
    # widgets were drawn, it raised StreamlitWidgetAlreadyInstantiatedError for `model`)
    at.button(key="align_upload_explore").click().run()
    assert not [e for e in at.exception if "AlreadyInstantiated" in e.value]
    sent = at.session_state["explore_gold"]
    assert sent["gold"] == lines[worst].rstrip("\n").split("\t")[2] and sent["model"] == "en-fr"


def _has(at, key: str) -> bool:
    try:
        at.dataframe(key=key)
    except KeyError:
        return False
    return True
