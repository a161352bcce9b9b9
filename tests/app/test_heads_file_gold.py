"""The Heads page's "Your file": the file's gold column reaches the roles (a cross-attention head can only be
named aligning against gold links)."""

from __future__ import annotations

from attention_lens.app import services
from streamlit.testing.v1 import AppTest

from tests.analysis.conftest import GOLDS
from tests.fixtures.apptest import ENTRY
from tests.fixtures.checkpoints import SOURCES, TARGETS


def test_your_file_keeps_the_gold_links_for_the_roles(tiny_ckpt, tiny_engine, monkeypatch):
    from attention_lens.model.analysis.head_roles import head_roles
    from attention_lens.model.corpora import Example

    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    asked = []

    def roles(model_key, pairs):
        asked.append(pairs)
        return head_roles(tiny_engine, [Example(*p) for p in pairs])

    monkeypatch.setattr(services, "head_roles_on", roles)
    monkeypatch.setattr(services, "head_ranking_on", lambda key, pairs: {"base_loss": 1.0, "heads": []})
    text = "".join(f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLDS))
    at = AppTest.from_file(ENTRY, default_timeout=120).run()
    at.switch_page("screens/heads.py").run()
    at.session_state["heads_data"] = "file"
    at.run()
    at.file_uploader(key="heads_file").upload("mine.tsv", text.encode(), "text/tab-separated-values")
    at.run()
    at.button(key="heads_rank").click().run()
    assert not at.exception
    assert asked and [p[2] for p in asked[-1]] == GOLDS  # was (source, target) only
