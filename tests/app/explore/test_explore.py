"""The Explore page under Streamlit's AppTest, on tiny random checkpoints named through LENS_MODEL_DIRS."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.apptest import CAT, ENTRY, explore_on, figure, heat_shapes, panels, stepper


@pytest.fixture(scope="module")
def two_models(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("app_models")
    first = build_tiny_checkpoint(root / "tiny-a")
    second = build_tiny_checkpoint(root / "tiny-b", seed=1, n_heads=2, n_decoder_layers=1)
    return first, second


@pytest.fixture
def app(two_models, monkeypatch) -> AppTest:
    return explore_on(monkeypatch, list(two_models), "tiny-a")


def step_text(at: AppTest) -> str:
    """The step the page's stepper was given, as the stepper heads its panel ("**Step 3 of 12**")."""
    header, _ = stepper(at)
    return f"**Step {header['step']} of {header['m']}**"


def test_page_loads_on_default_model(app):
    assert not app.exception
    assert not app.error
    assert app.session_state["model"] == "tiny-a"
    assert app.session_state["step"] == 1
    assert step_text(app).startswith("**Step 1 of ")
    # no chart: the picture and the next-token bars are the stepper's (app/render/stepper), given every step's
    # candidates, the chosen one among them
    assert not app.get("echarts_chart") and not app.get("plotly_chart")
    header, _ = stepper(app)
    first = header["steps"][0]
    assert len(first["top"]) >= 2 and [tok for tok, _ in first["top"]].count(first["token"]) == 1


def test_step_controls_change_the_visible_step(app):
    m = int(step_text(app).split(" of ")[1].rstrip("*"))
    assert m >= 4
    app.button(key="next").click().run()
    app.button(key="next").click().run()
    assert app.session_state["step"] == 3 and step_text(app).startswith("**Step 3 ")
    assert heat_shapes(figure(app, "attention"))[0][0] == 3  # cross-attention shows three rows
    app.button(key="back").click().run()
    assert app.session_state["step"] == 2
    app.button(key="end").click().run()
    assert app.session_state["step"] == m
    assert app.button(key="next").disabled
    app.button(key="reset").click().run()
    assert app.session_state["step"] == 1 and app.button(key="back").disabled
    app.slider(key="step").set_value(4).run()
    assert step_text(app).startswith("**Step 4 ")
    assert not app.exception


def test_step_click_does_not_decode_again(app, monkeypatch):
    from attention_lens.model.builtin.engine import BuiltinEngine

    def refuse(*args, **kwargs):
        raise AssertionError("a step click re-ran the model")

    for name in ("run_generate", "run_teacher_forced", "run_beam", "encode_source", "teacher_forced_batch",
                 "start_decoding"):
        monkeypatch.setattr(BuiltinEngine, name, refuse)
    app.button(key="next").click().run()
    app.slider(key="step").set_value(3).run()
    assert not app.exception and app.session_state["step"] == 3


def test_heatmap_shapes_for_a_known_sentence(app, tiny_engine):
    n = len(tiny_engine.prepare_source(CAT)[1])
    app.slider(key="step").set_value(3).run()
    shapes = {}
    for kind in ("cross_attention", "decoder_self_attention", "encoder_self_attention"):
        app.segmented_control(key="kind").set_value(kind).run()
        assert not app.exception
        shapes[kind] = heat_shapes(figure(app, "attention"))
        assert len(shapes[kind]) == 2 * 4  # every layer x head of the tiny model
    assert set(shapes["encoder_self_attention"]) == {(n, n)}
    assert set(shapes["decoder_self_attention"]) == {(3, 3)}
    assert set(shapes["cross_attention"]) == {(3, n)}
    # One head, and the mean over heads (one panel per layer).
    app.segmented_control(key="view").set_value("head").run()
    app.selectbox(key="layer").set_value(1).run()
    assert heat_shapes(figure(app, "attention")) == [(n, n)]
    app.segmented_control(key="view").set_value("mean").run()
    assert heat_shapes(figure(app, "attention")) == [(n, n)] * 2


def test_decoder_mask_drawn_distinctly_in_teacher_forcing(app):
    app.radio(key="mode").set_value("teacher_forced").run()
    app.text_input(key="target").input("le chat s' assit .").run()
    assert not app.exception and not app.error
    app.segmented_control(key="kind").set_value("decoder_self_attention").run()
    app.slider(key="step").set_value(2).run()
    spec = figure(app, "attention")
    masked, main = panels(spec, masked=True), panels(spec)
    assert masked and len(masked) == len(main)
    m = main[0].shape[1]
    z = masked[0]
    assert z.shape == (2, m)
    expected = ~np.tril(np.ones((2, m), dtype=bool))  # the future keys of rows 0 and 1
    assert np.array_equal(~np.isnan(z), expected)
    assert np.all(np.isnan(main[0][expected]))


def test_switching_modes_and_options(app):
    app.radio(key="mode").set_value("beam").run()
    assert not app.exception
    app.slider(key="beam_size").set_value(2).run()
    assert len(app.selectbox(key="beam").options) == 2
    app.selectbox(key="beam").set_value(1).run()
    assert not app.exception and any(m.value.startswith("What the search holds") for m in app.markdown)
    app.radio(key="mode").set_value("sample").run()
    app.slider(key="temperature").set_value(1.5).run()
    app.number_input(key="seed").set_value(7).run()
    assert not app.exception and app.session_state["step"] == 1
    app.radio(key="mode").set_value("teacher_forced").run()
    assert app.text_input(key="target") is not None and not app.exception
    app.radio(key="mode").set_value("greedy").run()
    assert not app.exception


def test_switching_model(app):
    app.selectbox(key="model").set_value("tiny-b").run()
    assert not app.exception and not app.error
    assert len(heat_shapes(figure(app, "attention"))) == 1 * 2  # 1 decoder layer x 2 heads
    assert any("1+1 layers × 2 heads" in m.value or "2+1 layers × 2 heads" in m.value for m in app.sidebar.markdown)


def test_preset_fills_source_and_target(app):
    app.selectbox(key="preset").set_value("black-cat").run()
    assert app.text_input(key="source").value == "the black cat sat on the mat ."
    assert app.session_state["target"] == "le chat noir s' assit sur le tapis ."
    assert any("noir" in c.value for c in app.caption)


def test_force_a_token(app):
    app.button(key="next").click().run()
    app.session_state["force_open"] = True  # the force box's expander, opened
    app.run()
    options = app.selectbox(key="force_choice").options
    assert options
    choice = options[-1]
    app.selectbox(key="force_choice").set_value(choice).run()
    app.button(key="force").click().run()
    assert not app.exception
    assert app.session_state["step"] == 2
    assert len(app.session_state["forced"]) == 2
    header, _ = stepper(app)
    assert header["target"][1] == choice and header["forced"] == [1]  # only the forced token is marked forced
    app.button(key="unforce").click().run()
    assert app.session_state["forced"] == ()


def test_bad_input_shows_an_error_not_a_traceback(app):
    app.text_input(key="source").input("   ").run()
    assert not app.exception
    assert any("empty" in e.value for e in app.error)
    app.text_input(key="source").input(CAT)
    app.radio(key="mode").set_value("teacher_forced").run()
    app.text_input(key="target").input("").run()
    assert not app.exception and any("reference" in e.value for e in app.error)


def test_unopenable_model_shows_an_error(tmp_path, monkeypatch):
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "config.json").write_text('{"src_vocab_size": 5}')
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tmp_path / "broken"))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", "broken")
    at = AppTest.from_file(ENTRY, default_timeout=60).run()
    assert not at.exception
    assert any("Cannot open" in e.value for e in at.error)  # once, in the main area


def test_export_buttons_present(app):
    app.session_state["export_open"] = True  # the buttons are drawn only while the expander is open
    app.run()
    keys = {b.key for b in app.get("download_button")}
    assert {"dl_html", "dl_csv", "dl_json", "dl_npz"} <= keys
