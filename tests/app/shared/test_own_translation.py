"""A page with a sentence typed and no reference target asks for one and offers the model's own greedy
translation; one click uses it (an engineer checking a sentence need not type the French first). The Alignment
page then aligns on it, the Leakage lab runs its teacher-forced view on it."""

from __future__ import annotations

import pytest
from attention_lens.app.state import text
from attention_lens.model.engine import load_engine

from tests.fixtures.apptest import shipped_app
from tests.fixtures.checkpoints import shipped_checkpoint

SENTENCE = "the zyzzyva ate my homework!!"


def _has_links(at) -> bool:
    return not at.error and any("links" in m.value for m in at.markdown)


def _has_leak_metric(at) -> bool:
    return "Max future mass" in [m.label for m in at.metric]


@pytest.mark.parametrize(
    ("page", "button", "result_shown"),
    [
        ("screens/alignment.py", "align_use_own", _has_links),
        ("screens/leakage_lab.py", "leak_use_own", _has_leak_metric),
    ],
    ids=["alignment", "leakage"],
)
def test_a_typed_sentence_runs_on_the_models_own_translation(monkeypatch, page, button, result_shown):
    engine = load_engine(shipped_checkpoint("everyday-en-fr"))
    own = engine.detokenize([s.id for s in engine.trace(SENTENCE).steps])
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.switch_page(page).run()
    at.text_input(key="source").set_value(SENTENCE).run()
    assert at.text_input(key="target").value == ""
    asked = [m.value for m in at.info if "reference target" in m.value]
    assert len(asked) == 1 and text(own) in asked[0], asked  # as the page writes it (markup escaped)
    assert not result_shown(at)
    at.button(key=button).click().run()
    assert at.text_input(key="target").value == own
    assert not [m.value for m in at.info if "reference target" in m.value]
    assert result_shown(at)
