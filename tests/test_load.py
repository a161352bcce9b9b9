"""Many sessions at once: small runs of benchmarks/load_test.py (protocol level: 3 sessions x 4 verified clicks)
and browser_load_test.py (10 Chromium pages x 5 steps), on one served app, loopback only; and the bounds that
keep a long-running class server's memory flat: every Streamlit cache in app/ has max_entries or ttl, and a
session's state does not grow however often it steps or forces."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
ENTRY = str(APP / "streamlit_app.py")
CHROMIUM = "/usr/bin/chromium"
if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))


@pytest.mark.slow
def test_protocol_sessions_step_and_every_click_is_verified():
    import load_test

    report = load_test.run(sessions=3, steps=4, interval=0.5)
    print(report)
    summary = report["summary"]
    assert list(summary) == ["sessions", "steps", "p50_ms", "p95_ms", "max_ms", "errors", "server_rss_mb",
                             "server_cpu_s"]
    assert summary["errors"] == 0, report["details"]["error_samples"]
    assert summary["steps"] == 3 * 4
    assert summary["server_cpu_s"] > 0 and summary["server_rss_mb"] > 50


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")
def test_ten_concurrent_sessions_step_without_error():
    import browser_load_test

    report = browser_load_test.run(sessions=10, steps=5)
    print(report)
    assert report["server_alive"]
    assert report["failures"] == [] and report["errors"] == 0
    assert report["steps_done"] == 10 * 5
    assert report["p95_step_s"] < 60
    assert report["rss_growth_mb"] < 300


def cache_decorators(tree: ast.AST):
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for dec in node.decorator_list:
                target = dec.func if isinstance(dec, ast.Call) else dec
                if isinstance(target, ast.Attribute) and target.attr in ("cache_data", "cache_resource"):
                    yield node.name, dec


def test_every_app_cache_is_bounded():
    found = []
    for path in sorted(APP.rglob("*.py")):
        for name, dec in cache_decorators(ast.parse(path.read_text(encoding="utf-8"))):
            keywords = {k.arg for k in dec.keywords} if isinstance(dec, ast.Call) else set()
            found.append(name)
            assert keywords & {"max_entries", "ttl"}, f"{path.name}: cache of {name}() has no max_entries or ttl"
    assert {"get_engine", "get_trace", "presets"} <= set(found)


def test_session_state_stays_bounded_when_stepping_and_forcing(tiny_ckpt, monkeypatch):
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from app import registry

    monkeypatch.setattr(registry, "SOURCES", [registry.operator_entries])
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    st.cache_resource.clear()
    at = AppTest.from_file(ENTRY, default_timeout=90)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = "the cat sat ."
    at.run()
    sizes = []
    for i in range(24):
        if i % 8 == 7 and at.session_state["forced"]:
            at.button(key="unforce").click().run()
        elif i % 3 == 2 and at.selectbox(key="force_choice") is not None:
            at.button(key="force").click().run()
        else:
            at.button(key="next").click().run()
        assert not at.exception
        state = {k: at.session_state[k] for k in at.session_state}
        sizes.append((len(state), len(repr(state))))
        assert len(at.session_state["forced"]) <= at.session_state["step"]
    # After the first few interactions have created every widget, the state neither gains keys (beyond the
    # "Undo forcing" button, there only while something is forced) nor grows.
    counts = [n for n, _ in sizes[6:]]
    assert max(counts) - min(counts) <= 1
    assert max(b for _, b in sizes[6:]) < 2 * min(b for _, b in sizes[6:]) + 500
    st.cache_resource.clear()


def test_isolated_test_env_does_not_leak(monkeypatch):
    """The load test's server gets only its own LENS_ settings (no operator folder of this shell)."""
    import browser_load_test

    monkeypatch.setenv("LENS_HF_MODELS", "/somewhere")
    env, _ = browser_load_test.model_env(str(ROOT))
    assert "LENS_HF_MODELS" not in env and env["LENS_MODEL_DIRS"] == str(ROOT)
    assert os.environ["LENS_HF_MODELS"] == "/somewhere"


class FakeServer:
    """A session whose 'server' redraws the page as told: to check what click_next accepts as a step."""

    def __init__(self, step: int, spec: str):
        self.page = {}
        self.draw(step, spec, "r0")

    def draw(self, step: int, spec: str, run_id: str) -> None:
        from st_client import Shown
        from streamlit.proto.Element_pb2 import Element

        md, nxt, fig = Element(), Element(), Element()
        md.markdown.body = f"**Step {step} of 9**"
        nxt.button.id, nxt.button.label = "$$ID-1-next", "Next"
        fig.plotly_chart.id, fig.plotly_chart.spec = "$$ID-2-attention", spec
        self.page = {(0, i): Shown(e, "frag", run_id, 0.0) for i, e in enumerate((md, nxt, fig))}

    def answer(self, step: int, spec: str):
        async def rerun(trigger=None):
            from st_client import Run

            assert trigger is not None and trigger.element.button.label == "Next"
            self.draw(step, spec, "r1")
            return Run(run_id="r1")

        self.rerun = rerun
        return self


@pytest.mark.parametrize(("step", "spec", "verified"), [(2, "B", True), (1, "B", False), (2, "A", False),
                                                        (3, "B", False)])
def test_a_click_counts_only_when_the_step_and_the_figure_advanced(step, spec, verified):
    import asyncio

    import load_test

    latency, why = asyncio.run(load_test.click_next(FakeServer(1, "A").answer(step, spec)))
    assert (latency is not None, why is None) == (verified, verified), why
