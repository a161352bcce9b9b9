"""Every export returns a non-empty file of the right type."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from attention_lens.app import exports
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.engine.trace import Trace

APP = Path(__file__).resolve().parents[3] / "app"



@pytest.fixture(scope="module")
def trace(tiny_engine):
    return tiny_engine.trace("the cat sat .", options=DecodeOptions(max_len=5))


@pytest.fixture(scope="module")
def beam(tiny_engine):
    return tiny_engine.trace("the cat sat .", options=DecodeOptions(mode="beam", beam_size=2, max_len=4))


def test_csv_long_format(trace):
    data = exports.csv_bytes(trace)
    assert data.decode().splitlines()[0] == ",".join(exports.CSV_COLUMNS)
    df = pd.read_csv(io.BytesIO(data), keep_default_na=False)
    sizes = {k: getattr(trace, k).size for k in exports.KINDS}
    assert len(df) == sum(sizes.values())
    assert df.groupby("kind").size().to_dict() == sizes
    cross = df[(df.kind == "cross_attention") & (df["layer"] == 2) & (df["head"] == 3) & (df["query_index"] == 0)]
    assert np.allclose(cross.weight.to_numpy(), trace.cross_attention[1, 2, 0], atol=1e-6)
    assert list(cross.key_token) == list(trace.source_tokens)
    dec = df[df.kind == "decoder_self_attention"]
    assert not dec[dec.key_index > dec.query_index].allowed.any()  # generate mode: the future was masked


def test_csv_numbers_layers_and_heads_from_1_as_the_page_does(trace):
    df = pd.read_csv(io.BytesIO(exports.csv_bytes(trace)), keep_default_na=False)
    for kind in exports.KINDS:
        rows = df[df.kind == kind]
        n_layers, n_heads = getattr(trace, kind).shape[:2]
        assert sorted(set(rows["layer"])) == list(range(1, n_layers + 1))
        assert sorted(set(rows["head"])) == list(range(1, n_heads + 1))
    assert df["query_index"].min() == 0  # positions stay positions, as on the axes (`0 ▁the`)


def test_file_names_carry_model_mode_sentence_and_step(tiny_engine, trace, beam):
    assert exports.file_stem("en-fr", trace, 3) == "en-fr-greedy-the-cat-sat-step3"
    assert exports.file_stem("en-fr", beam, 1, "cross_attention") == "en-fr-beam-the-cat-sat-step1-cross"
    other = tiny_engine.trace("the dog sat .", options=DecodeOptions(mode="sample", max_len=3))
    assert exports.file_stem("Helsinki-NLP/opus-mt-en-de", other, 2) == \
        "helsinki-nlp-opus-mt-en-de-sample-the-dog-sat-step2"
    assert exports.slug("Der Hund, den die Katze jagte, bellte.") == "der-hund-den-die-katze-jagte-bellte"
    assert exports.slug("Straße über Tür " * 9) == "strasse-uber-tur-strasse-uber-tur"
    assert exports.slug("<>?") == "run"


def test_image_title_names_model_kind_head_and_step():
    assert exports.image_title("en-fr", "cross_attention", "head", 1, 2, 4) == \
        "en-fr · Cross-attention · layer 2 · head 3 · step 4 · raw weights"
    assert exports.image_title("de-en", "encoder_self_attention", "mean", 0, 0, 1) == \
        "de-en · Encoder self-attention · mean over heads · step 1 · raw weights"
    assert exports.image_title("en-fr", "cross_attention", "head", 1, 2, 4, "norm_weighted") == \
        "en-fr · Cross-attention · layer 2 · head 3 · step 4 · norm-weighted reading"


@pytest.mark.skipif(not exports.image_export_available(), reason="kaleido needs Chrome or Chromium")
def test_exported_picture_has_its_title(trace):
    fig = exports.kind_figure(trace, "cross_attention")
    fig.update_layout(title=None)
    title = exports.image_title("en-fr", "cross_attention", "grid", 0, 0, trace.m)
    svg = exports.image(fig, "svg", title=title).decode()
    assert "en-fr · Cross-attention · all layers × heads" in svg
    assert fig.layout.title.text is None  # the page's figure is not changed
    assert exports.image(fig, "png", scale=1, title=title).startswith(b"\x89PNG")


def test_json_and_npz_round_trip(trace, beam, tmp_path):
    assert Trace.from_dict(json.loads(exports.json_bytes(trace))).target_tokens == trace.target_tokens
    for t in (trace, beam):
        data = exports.npz_bytes(t)
        assert data[:2] == b"PK"
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            back = Trace.from_npz_dict(z)
        assert np.array_equal(back.cross_attention, t.cross_attention)
        assert len(back.beams) == len(t.beams)


def test_exports_say_which_reading_they_hold(trace):
    """A norm-weighted or rollout export differs from the raw one in its numbers: its names, CSV and report say
    which it is (they were the same as a raw export's)."""
    assert exports.file_stem("en-fr", trace, 3, "cross_attention", "rollout") == \
        "en-fr-greedy-the-cat-sat-step3-cross-rollout"
    assert exports.file_stem("en-fr", trace, 3, reading="norm_weighted") == \
        "en-fr-greedy-the-cat-sat-step3-norm-weighted"
    df = pd.read_csv(io.BytesIO(exports.csv_bytes(trace, "norm_weighted")), keep_default_na=False)
    assert set(df["reading"]) == {"norm-weighted"}
    assert set(pd.read_csv(io.BytesIO(exports.csv_bytes(trace)), keep_default_na=False)["reading"]) == {"raw"}
    page = exports.html_report(trace, reading="rollout", heads_off=("cross:2:1",)).decode()
    assert "&quot;reading&quot;: &quot;rollout&quot;" in page and "cross:2:1" in page


def test_html_report_is_self_contained(trace):
    page = exports.html_report(trace).decode()
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")
    assert not re.search(r"<script[^>]+src=[\"']?(https?:)?//", page)  # nothing fetched from a CDN
    assert "Plotly" in page and page.count("plotly-graph-div") >= 3
    assert "&lt;s&gt;" in page  # tokens are escaped, not parsed as tags


@pytest.mark.skipif(not exports.image_export_available(), reason="kaleido needs Chrome or Chromium")
def test_png_and_svg(trace):
    fig = exports.kind_figure(trace, "cross_attention")
    png = exports.image(fig, "png", scale=1)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    svg = exports.image(fig, "svg")
    assert b"<svg" in svg[:200]


def test_image_rejects_unknown_format(trace):
    with pytest.raises(ValueError):
        exports.image(exports.kind_figure(trace, "cross_attention"), "gif")
