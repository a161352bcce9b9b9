"""The Leakage lab, Alignment and Heads pages keep their state in the URL (a link reproduces the page),
under AppTest on the shipped models. AppTest starts on Explore; a link to another page is opened by putting its
query parameters in place and switching to the page before that page has run in the session."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import shipped_app


@pytest.fixture
def app(monkeypatch) -> AppTest:
    return shipped_app(monkeypatch, default=None, timeout=90, needs=("en-fr", "de-en")).run()


def open_link(at: AppTest, page: str, params: dict[str, str]) -> AppTest:
    for name in list(at.query_params):
        del at.query_params[name]
    at.query_params.update(params)
    return at.switch_page(page).run()


def params_of(at: AppTest) -> dict[str, str]:
    return {k: at.query_params[k] for k in at.query_params}


def test_a_leakage_lab_link_opens_its_model_sentence_switches_and_view(app):
    link = {"model": "de-en", "text": "Der Hund bellte.", "target": "The dog barked.", "view": "probe",
            "causal": "0", "shift": "1"}
    at = open_link(app, "screens/leakage_lab.py", link)
    assert not at.exception and not at.warning
    assert at.session_state["model"] == "de-en" and at.text_input(key="source").value == "Der Hund bellte."
    assert at.toggle(key="leak_causal").value is False and at.toggle(key="leak_shift").value is True
    assert at.radio(key="leak_view").value == "probe"
    assert {k: params_of(at)[k] for k in link} == link
    at.toggle(key="leak_shift").set_value(False).run()
    assert params_of(at)["shift"] == "0"


def test_an_alignment_link_opens_its_model_reading_and_head(app):
    link = {"model": "de-en", "text": "Der Hund bellte.", "target": "The dog barked.", "reading": "shift",
            "layer": "2", "head": "3", "extract": "argmax"}
    at = open_link(app, "screens/alignment.py", link)
    assert not at.exception
    assert at.session_state["model"] == "de-en"
    assert at.selectbox(key="align_reading").value == "shift"
    assert (at.selectbox(key="align_layer").value, at.selectbox(key="align_head").value) == (2, 3)
    assert {k: params_of(at)[k] for k in link} == link


def test_a_heads_link_opens_its_model_pairs_and_kind(app):
    at = open_link(app, "screens/heads.py", {"model": "de-en", "n": "25", "kind": "cross"})
    assert not at.exception
    assert at.session_state["model"] == "de-en" and at.select_slider(key="heads_n").value == 25
    at.button(key="heads_rank").click().run()
    assert [c.proto.id.rsplit("-", 1)[-1] for c in at.get("plotly_chart")] == ["heads_cross"]
    assert params_of(at) == {"model": "de-en", "data": "test", "n": "25", "kind": "cross"}
    named = next(e for e in at.expander if e.label.startswith("Ranked on"))
    assert named.label == "Ranked on the first 25 pairs of the test split"
    listed = named.markdown[0].value.splitlines()
    assert len(listed) == 25 and all(" → " in line for line in listed)


def test_a_bad_page_parameter_falls_back_with_a_notice(app):
    at = open_link(app, "screens/leakage_lab.py", {"view": "nowhere", "causal": "maybe"})
    assert not at.exception
    notes = " ".join(w.value for w in at.warning)
    assert "view=nowhere" in notes and "causal=maybe" in notes
    assert at.radio(key="leak_view").value == "switches" and at.toggle(key="leak_causal").value is True


def test_heads_ranks_on_an_uploaded_file_and_names_its_pairs(app):
    at = app.switch_page("screens/heads.py").run()
    at.segmented_control(key="heads_data").set_value("file").run()
    # AppTest has no file upload: the page's parse and ranking of a file's pairs are the services it calls
    from attention_lens.app import services, uploads

    data = b"the cat sat .\tle chat s' assit .\nthe dog ran .\tle chien courut .\n"
    result = services.upload_head_ranking("en-fr", data, uploads.check_upload(data))["ranking"]
    assert {h["kind"] for h in result["heads"]} == {"enc", "dec", "cross"} and len(result["heads"]) == 36
    assert any("Upload a file" in c.value for c in at.caption) and at.get("file_uploader")


def test_a_link_to_an_everyday_model_keeps_its_sentence_when_it_is_a_grammar_preset(monkeypatch):
    """`?model=everyday-en-fr&text=the cat sat .&view=head` (the sentence is one of the grammar models' examples):
    the page opened on the everyday model's first example, 'The cat sat on the mat.', and its mean view."""
    at = shipped_app(monkeypatch, default=None, timeout=90, needs=("everyday-en-fr",))
    at.query_params.update({"model": "everyday-en-fr", "text": "the cat sat .", "view": "head", "layer": "1",
                            "head": "1"})
    at.run()
    assert not at.exception
    assert at.session_state["model"] == "everyday-en-fr"
    assert at.text_input(key="source").value == "the cat sat ."
    assert params_of(at)["text"] == "the cat sat ." and params_of(at)["view"] == "head"
