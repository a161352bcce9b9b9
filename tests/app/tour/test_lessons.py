"""Two of the tour's stops under AppTest on the shipped en-fr model: training against inference (the
Leakage lab names the step where the prefixes part) and the key-value cache (Explore opens the cache panel)."""

from __future__ import annotations

from attention_lens.app.screens import tour

from tests.fixtures.apptest import shipped_app


def test_the_exposure_and_cache_stops(monkeypatch):
    exposure = next(i for i, s in enumerate(tour.STOPS) if s.get("leakage", {}).get("leak_view") == "exposure")
    cache = next(i for i, s in enumerate(tour.STOPS) if s.get("state", {}).get("kv_open"))
    at = shipped_app(monkeypatch, default=None, timeout=90, needs=("en-fr",)).run()
    at.session_state["tour_stop"] = exposure - 1
    at.run()
    at.button(key="tour_next").click().run()
    assert not at.exception and at.session_state["tour_stop"] == exposure
    assert [t.value for t in at.title] == ["Leakage lab"] and at.radio(key="leak_view").value == "exposure"
    # The stop's text says the prefixes part at step 3 ('chat' written where the reference has 'chien').
    assert any("The prefixes part at step 3" in w.value and "chat" in w.value for w in at.warning)
    at.session_state["tour_stop"] = cache - 1
    at.button(key="tour_next").click().run()
    assert not at.exception and at.session_state["tour_stop"] == cache
    assert [t.value for t in at.title] == ["Attention Lens"]
    assert any(m.value.startswith("At step 4, each of the 3 decoder layers holds the keys and values of 4 target")
               for m in at.markdown)
