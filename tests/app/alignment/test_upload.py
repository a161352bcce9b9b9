"""The Alignment page's upload: upload a TSV with gold and the heads are ranked and the best
head and method named; a click on a ranked head opens it; without gold the heads' agreement is shown; a
malformed file is refused naming its bad lines, and nothing else on the page breaks; links download as
Pharaoh."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
from attention_lens.model.analysis.alignment import parse_tsv
from streamlit.testing.v1 import AppTest

from harness.models.tiny import SOURCES, TARGETS, build_tiny_checkpoint
from tests.fixtures.apptest import ALIGNMENT, page_on, upload
from tests.fixtures.drawings import drawings, texts

GOLD = ["0-0 1-1 2-2 3-3", "0-0 1-1 2-2 3-3 6-4", "0-0 1-1 2-2", "0-0 1-1 2-2 4-4", "0-0 1-1 3-2"]
WITH_GOLD = "".join(f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLD))
NO_GOLD = "".join(f"{s}\t{t}\n" for s, t in zip(SOURCES, TARGETS))


@pytest.fixture(scope="module")
def model(tmp_path_factory) -> Path:
    return build_tiny_checkpoint(tmp_path_factory.mktemp("align_upload") / "en-fr")


@pytest.fixture
def app(model, monkeypatch) -> AppTest:
    return page_on(monkeypatch, ALIGNMENT, [model], preset="custom", source=SOURCES[0], target=TARGETS[0],
                   align_n=20)


def titles(at: AppTest) -> list[str]:
    """The titles of the page's charts: plotly figures and SVG drawings (app/screens/charts.py)."""
    plotly = [json.loads(c.proto.spec)["layout"].get("title", {}).get("text", "") for c in at.get("plotly_chart")]
    return plotly + [texts(svg)[0] for svg in drawings(at).values()]


def test_a_5_line_file_with_gold_ranks_the_heads_and_names_the_best(app):
    upload(app, WITH_GOLD)
    assert not app.exception
    best = next(s.value for s in app.success if "Best method" in s.value)
    assert "5 sentences with gold" in best and "Best single head: **layer" in best
    ranking = app.dataframe(key="align_upload_rank").value
    assert len(ranking) == 2 * 4 and list(ranking["AER"]) == sorted(ranking["AER"])
    # the ranking's best row is the head the page opens first
    assert app.selectbox(key="align_upload_head").value == ranking["head"][0]
    assert any("Download the predicted links" in b.label for b in app.get("download_button"))


def test_choosing_a_ranked_head_opens_its_links(app):
    upload(app, WITH_GOLD)
    ranking = app.dataframe(key="align_upload_rank").value
    app.selectbox(key="align_upload_head").set_value(ranking["head"][3]).run()
    app.selectbox(key="align_upload_sentence").set_value(2).run()
    assert not app.exception
    layer, head = ranking["layer"][3], ranking["head #"][3]
    assert f"Sentence 3 · layer {layer} · head {head} · plain reading" in titles(app)


def test_without_gold_the_heads_agreement_is_shown(app):
    upload(app, NO_GOLD)
    assert not app.exception and not app.error
    assert any("No gold links in the file" in i.value for i in app.info)
    assert any(t.startswith("Agreement between heads") for t in titles(app))


def test_a_malformed_file_names_its_bad_lines_and_nothing_else_breaks(app):
    bad = f"{SOURCES[0]}\t{TARGETS[0]}\t0-0\n\n{SOURCES[1]}\n{SOURCES[2]}\t{TARGETS[2]}\t0-0 9-9\n"
    upload(app, bad)
    assert not app.exception
    message = html.unescape(next(e.value for e in app.error if "mine.tsv" in e.value))
    assert "line 3: expected source" in message and "line 4: gold links: gold link 9-9 is outside" in message
    assert "line 1" not in message
    assert app.title[0].value == "Alignment"
    assert any("Which heads align" in s.value for s in app.subheader)  # the rest of the page is still there


def test_pharaoh_export_is_one_line_per_sentence(model):
    from attention_lens.model.analysis.alignment import align_upload, parse_pharaoh
    from attention_lens.model.engine.loader import load_engine

    examples, problems = parse_tsv(WITH_GOLD)
    assert not problems
    engine = load_engine(model)
    report = align_upload(engine, WITH_GOLD)
    lines = report.pharaoh(engine, report.best_method).splitlines()
    assert len(lines) == 5
    for line, ex in zip(lines, examples):
        parse_pharaoh(line).check(len(ex.source.split()), len(ex.target.split()))
