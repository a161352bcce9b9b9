"""Every export returns a non-empty file of the right type."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app import exports
from model.engine import DecodeOptions
from model.engine.trace import Trace

APP = Path(__file__).resolve().parents[2] / "app"



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
    cross = df[(df.kind == "cross_attention") & (df["layer"] == 1) & (df["head"] == 2) & (df["query_index"] == 0)]
    assert np.allclose(cross.weight.to_numpy(), trace.cross_attention[1, 2, 0], atol=1e-6)
    assert list(cross.key_token) == list(trace.source_tokens)
    dec = df[df.kind == "decoder_self_attention"]
    assert not dec[dec.key_index > dec.query_index].allowed.any()  # generate mode: the future was masked


def test_json_and_npz_round_trip(trace, beam, tmp_path):
    assert Trace.from_dict(json.loads(exports.json_bytes(trace))).target_tokens == trace.target_tokens
    for t in (trace, beam):
        data = exports.npz_bytes(t)
        assert data[:2] == b"PK"
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            back = Trace.from_npz_dict(z)
        assert np.array_equal(back.cross_attention, t.cross_attention)
        assert len(back.beams) == len(t.beams)


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
