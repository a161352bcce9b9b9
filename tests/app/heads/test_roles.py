"""The Heads page's roles beside the ablation ranking under AppTest: one table per kind, the very
roles model.analysis.head_roles names over the same test pairs, and the rule stated on the page."""

from __future__ import annotations

import pytest
from attention_lens.app import state
from attention_lens.app.render.roles import roles_html
from attention_lens.model.analysis.head_roles import ROLE_RULE, head_roles
from attention_lens.model.corpora import first_test_examples
from streamlit.testing.v1 import AppTest

from tests.fixtures.apptest import ENTRY


@pytest.fixture
def app(tiny_ckpt, monkeypatch) -> AppTest:
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    return AppTest.from_file(ENTRY, default_timeout=120).run()


def test_heads_page_names_every_heads_role(app, tiny_engine):
    app.switch_page("screens/heads.py").run()
    app.select_slider(key="heads_n").set_value(25).run()
    app.button(key="heads_rank").click().run()
    assert not app.exception
    expected = head_roles(tiny_engine, first_test_examples("en-fr", 25))
    bodies = [h.proto.body for h in app.get("html")]
    for code in ("enc", "dec", "cross"):
        rows = [r for r in expected["heads"] if r["kind"] == code]
        title = state.KINDS_BY_CODE[code][1]
        assert roles_html(rows, f"{title}: what each head attends to", escape=state.text) in bodies
    assert any(state.text(ROLE_RULE) in c.value for c in app.caption)
