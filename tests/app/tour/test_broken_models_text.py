"""The tour's "broken models" stop: its text accounts for every model the Leakage lab's view then shows (it said
"Two models were trained with the mask or the shift missing" above four columns, the fourth en-fr-no-scaling,
which does not fall apart)."""

from __future__ import annotations

from attention_lens.app.screens import tour

from tests.fixtures.apptest import shipped_app


def test_the_broken_models_stop_names_the_models_it_shows(monkeypatch):
    broken = next(i for i, s in enumerate(tour.STOPS) if s.get("leakage", {}).get("leak_view") == "broken")
    at = shipped_app(monkeypatch, default=None, timeout=90, needs=("en-fr", "en-fr-no-scaling")).run()
    at.session_state["tour_stop"] = broken - 1
    at.run()
    at.button(key="tour_next").click().run()
    assert not at.exception and at.radio(key="leak_view").value == "broken"
    columns = [m.value.removeprefix("#### ") for m in at.markdown if m.value.startswith("#### ")]  # one per model
    stop = next(m.value for m in at.markdown if m.value.startswith(f"**Tour {broken + 1}/"))
    assert columns == ["en-fr", "en-fr-no-causal-mask", "en-fr-no-shift", "en-fr-no-scaling"], columns
    assert "en-fr-no-scaling" in stop and "1/√d_k" in stop, stop
