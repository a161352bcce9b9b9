"""The Leakage lab with a sentence typed and no reference target: besides asking for one, it offers the model's
own greedy translation, and one click runs the lab's teacher-forced view on it."""

from __future__ import annotations

from attention_lens.app.state import text
from attention_lens.model.engine import load_engine

from tests.fixtures.apptest import shipped_app
from tests.fixtures.checkpoints import shipped_checkpoint

SENTENCE = "the zyzzyva ate my homework!!"


def test_a_typed_sentence_runs_on_the_models_translation(monkeypatch):
    engine = load_engine(shipped_checkpoint("everyday-en-fr"))
    own = engine.detokenize([s.id for s in engine.trace(SENTENCE).steps])
    at = shipped_app(monkeypatch, default="everyday-en-fr").run()
    at.switch_page("screens/leakage_lab.py").run()
    at.text_input(key="source").set_value(SENTENCE).run()
    assert at.text_input(key="target").value == ""
    asked = [m.value for m in at.info if "reference target" in m.value]
    assert len(asked) == 1 and text(own) in asked[0], asked
    assert not at.metric
    at.button(key="leak_use_own").click().run()
    assert at.text_input(key="target").value == own
    assert not [m.value for m in at.info if "reference target" in m.value]
    assert "Max future mass" in [m.label for m in at.metric]
