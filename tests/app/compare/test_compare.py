"""The Compare page under AppTest: a run compared with itself differs nowhere; a link opens both
sides, the view and the step exactly, and the difference is A - B over the matching tokens. The pictures and the
difference are what the page's pair stepper draws (app/render/stepper: picture, pair_difference), within the
packed runs' stated error."""

from __future__ import annotations

import os

import numpy as np
import pytest
from attention_lens.app.render import stepper as packing
from attention_lens.model.analysis.compare import difference, picture
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.engine import DecodeOptions
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import ENTRY, pair

SAME = "the cat sat ."
OTHER = "the cat sat on the mat ."


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    root = tmp_path_factory.mktemp("compare_models")
    return build_tiny_checkpoint(root / "tiny-a"), build_tiny_checkpoint(root / "tiny-b", seed=1)


@pytest.fixture
def app(models, monkeypatch) -> AppTest:
    monkeypatch.setenv("LENS_MODEL_DIRS", os.pathsep.join(str(p) for p in models))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", "tiny-a")
    return AppTest.from_file(ENTRY, default_timeout=90).run()


def open_link(at: AppTest, params: dict[str, str]) -> AppTest:
    for name in list(at.query_params):
        del at.query_params[name]
    at.query_params.update(params)
    return at.switch_page("screens/compare.py").run()


def test_a_run_compared_with_itself_is_all_zero(app, models):
    at = open_link(app, {"model": "tiny-a", "a_text": SAME, "b_model": "tiny-a", "b_text": SAME})
    assert not at.exception
    trace = BuiltinEngine.load(models[0]).trace(SAME)
    for kind, rows, cols in (("cross", trace.m, trace.n), ("dec", trace.m, trace.m), ("enc", trace.n, trace.n)):
        at.segmented_control(key="cmp_kind").set_value(kind).run()
        at.slider(key="cmp_step").set_value(trace.m).run()
        for head in (0, 2):  # the layer's mean, and one head
            at.selectbox(key="cmp_head").set_value(head).run()
            assert not at.exception
            header, runs = pair(at)
            assert header["step"] == trace.m and header["diff"]
            _, _, z = packing.pair_difference(runs, header["step"])
            assert z.shape == (rows, cols) and not z.any()


def test_a_link_reproduces_both_sides(app, models):
    link = {"model": "tiny-a", "a_text": SAME, "b_model": "tiny-b", "b_text": OTHER, "kind": "enc", "layer": "2",
            "head": "3", "step": "2"}
    at = open_link(app, link)
    assert not at.exception and not at.warning
    a = BuiltinEngine.load(models[0]).trace(SAME, options=DecodeOptions())
    b = BuiltinEngine.load(models[1]).trace(OTHER, options=DecodeOptions())
    kind = "encoder_self_attention"
    header, runs = pair(at)
    assert header["step"] == 2 and [h["kind"] for h, _ in runs] == [kind, kind]
    assert [(h["view"], h["layer"], h["head"]) for h, _ in runs] == [("head", 1, 2)] * 2  # 0-based
    error = max(h["max_error"] for h, _ in runs)
    for (h, w), trace in zip(runs, (a, b)):
        drawn = packing.picture(h, w, min(2, h["m"]))["data"][0]["z"]
        np.testing.assert_allclose(drawn, picture(trace, kind, 2, 2, 3), atol=error)
    diff = difference(a, b, kind, 2, 2, 2, 3)
    shared = [i for i, (x, y) in enumerate(zip(a.source_tokens, b.source_tokens)) if x == y]
    assert diff.rows == diff.cols == shared and len(shared) >= 3  # the cat sat, at the same positions
    assert np.abs(diff.values).max() > 0  # two models with different weights
    rows, cols, drawn = packing.pair_difference(runs, 2)
    assert (rows, cols) == (diff.rows, diff.cols)
    np.testing.assert_allclose(drawn, diff.values, atol=2 * error)
    assert {k: at.query_params[k] for k in link} == link  # the page writes back what the link asked for
    at.slider(key="cmp_step").set_value(1).run()
    assert at.query_params["step"] == "1"


def test_the_difference_has_a_fixed_symmetric_scale_the_link_keeps(app):
    """A − B's colours run from -r to +r whatever the step's largest difference (stretched to it, -0.004 was
    drawn saturated): r is the page's choice, 0.5 unless a link or the box says otherwise."""
    at = open_link(app, {"model": "tiny-a", "a_text": SAME, "b_model": "tiny-b", "b_text": OTHER})
    assert not at.exception
    assert pair(at)[0]["diff"]["range"] == 0.5
    at.selectbox(key="cmp_diff_range").set_value(0.1).run()
    assert pair(at)[0]["diff"]["range"] == 0.1
    at = open_link(app, {"model": "tiny-a", "a_text": SAME, "b_model": "tiny-b", "b_text": OTHER, "diff": "0.25"})
    assert not at.exception and not at.warning
    assert pair(at)[0]["diff"]["range"] == 0.25
