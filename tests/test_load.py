"""Many sessions at once: small runs of benchmarks/load_test.py (protocol sessions clicking as Chromium does, in a
burst and at random times, with a real Chromium page beside them) and browser_load_test.py (10 Chromium pages x 5
steps), on one served app, loopback only; the load test's click message has the fields of a click captured from
Chromium (tests/fixtures/next_click.json); and the bounds that keep a long-running class server's memory flat:
every Streamlit cache in app/ has max_entries or ttl, and a session's state does not grow however often it steps
or forces."""

from __future__ import annotations

import ast
import asyncio
import json
import os
import urllib.parse
from pathlib import Path

import pytest

from benchmarks import browser_load_test, burst_bench, load_test
from harness.browser import CHROMIUM
from harness.explore_session import click_next, click_verified, explore_view, open_explore
from harness.server import app_env, served
from harness.st_client import Run, Shown, find

ROOT = Path(__file__).resolve().parent.parent
APP = ROOT / "app"
ENTRY = str(APP / "streamlit_app.py")
CLICK = ROOT / "tests" / "fixtures" / "next_click.json"
STEP = ROOT / "tests" / "fixtures" / "stepper_step.json"  # what Chromium sent per stepper step
SUMMARY = ["sessions", "browsers", *(f"{phase}_{what}" for phase in ("burst", "random") for what in
           ("p50_ms", "p95_ms", "max_ms", "browser_p50_ms", "browser_p95_ms", "browser_max_ms", "clicks")),
           "clicks", "errors", "cpu_ms_per_click", "messages_per_click", "blocks_per_click", "server_rss_mb",
           "server_cpu_s"]


def click_shape(message: dict) -> dict:
    """What a Next click's BackMsg (as protobuf JSON) is made of, values aside: its ClientState fields, each
    widget's key and kind of value, the query string's parameter names, context_info's fields."""
    cs = message["rerunScript"]
    return {"fields": sorted(cs),
            "widgets": sorted((w["id"].split("-", 2)[-1], next(k for k in w if k != "id"))
                              for w in cs["widgetStates"]["widgets"]),
            "query": sorted(urllib.parse.parse_qs(cs.get("queryString", ""), keep_blank_values=True)),
            "context": sorted(cs.get("contextInfo", {})),
            "fragment": bool(cs.get("fragmentId")), "cached": bool(cs.get("cachedMessageHashes"))}


@pytest.mark.slow
def test_the_load_tests_click_has_the_fields_of_a_real_chromium_click():
    """The protocol client's Next click on a fresh Explore (default model, first example) against the one Chromium
    sent (captured with `python -m benchmarks.browser_load_test --capture-click`): the same ClientState fields, the
    same widgets with the same kinds of value, query parameters and context; about the same size. And the click
    is cheap: the panels that are closed send nothing."""
    from google.protobuf import json_format

    real = json.loads(CLICK.read_text(encoding="utf-8"))

    async def ours(url: str) -> tuple[dict, int]:
        s = await open_explore(url, None)
        try:
            msg = s.rerun_message(trigger=explore_view(s.page).next)
            click, why = await click_verified(s)  # and the server accepts it as a step
            assert why is None, why
            # The closed export, link and cache panels are not redrawn (before: 86 messages, 42 blocks)
            assert click.run.messages <= 70 and click.run.blocks <= 36, (click.run.messages, click.run.blocks)
            return json_format.MessageToDict(msg), len(msg.SerializeToString())
        finally:
            await s.close()

    with served(app_env()) as (url, _):
        message, size = asyncio.run(ours(url))
    assert click_shape(message) == click_shape(real["message"])
    assert message["rerunScript"]["queryString"] == real["message"]["rerunScript"]["queryString"]
    assert abs(size - real["bytes"]) < 0.1 * real["bytes"], (size, real["bytes"])


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")
def test_the_captured_click_is_what_chromium_sends_today(tmp_path):
    """The fixture is not stale: a click captured now has its shape (recapture it when the page changes)."""
    fresh = browser_load_test.capture_click(tmp_path / "click.json")
    assert click_shape(fresh["message"]) == click_shape(json.loads(CLICK.read_text(encoding="utf-8"))["message"])


@pytest.mark.slow
def test_protocol_sessions_burst_and_random_and_every_click_is_verified():
    report = load_test.run(sessions=3, browsers=0, rounds=2, gap=0.2, seconds=3, think=0.5, step="server")
    print(report)
    summary = report["summary"]
    assert list(summary) == SUMMARY
    assert summary["errors"] == 0, report["details"]["error_samples"]
    assert summary["burst_clicks"] == 3 * 2 and summary["random_clicks"] >= 3
    assert summary["burst_browser_p95_ms"] is None
    assert summary["server_cpu_s"] > 0 and summary["server_rss_mb"] > 50
    assert summary["messages_per_click"] > 10 and summary["blocks_per_click"] >= 1


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")
def test_a_chromium_page_clicks_beside_the_protocol_sessions():
    """The protocol sessions step as the page does: its captured step (the stepper's: nothing sent) is theirs, so
    the burst's timed clicks are the page's and every protocol step is a silent one."""
    report = load_test.run(sessions=2, browsers=1, rounds=2, gap=0.2, seconds=4, think=0.5)
    print(report)
    summary, details = report["summary"], report["details"]
    assert summary["errors"] == 0, details
    assert details["step"] == "browser" and details["plan"] == load_test.fixture_plan() == []
    assert summary["burst_clicks"] == 2 and summary["burst_p50_ms"] is None  # the page's; the sessions sent nothing
    assert details["silent_steps"] >= 2 * 2
    assert 0 < summary["burst_browser_p50_ms"] <= summary["burst_browser_max_ms"] < 60_000
    assert summary["random_browser_p95_ms"] is not None


@pytest.mark.slow
def test_a_protocol_step_sends_what_a_chromium_step_sends():
    """The load test's protocol session, stepping as a captured Chromium step did (tests/fixtures/stepper_step.json:
    20 clicks on the stepper's Next, captured with `python -m benchmarks.burst_bench --capture`), sends the server
    the same messages for each step and gets the same number back (the stepper's step: none either way; the
    session's Next click sent a script run per step before)."""
    real = json.loads(STEP.read_text(encoding="utf-8"))
    assert len(real["steps"]) == 20 and real["load_sent"] == ["rerun_script"]  # the capture heard the page

    async def ours(url: str) -> list[dict]:
        s = await burst_bench.open_session(url)
        student = load_test.Student(session=s, plan=load_test.fixture_plan())
        tally, seen = load_test.Tally(), []
        try:
            for _ in real["steps"]:
                sent0, got0 = len(s.sent), s.got
                await student.prepare()
                await student.click(tally)
                await asyncio.sleep(burst_bench.SETTLE_MS / 1000)
                seen.append({"sent": [burst_bench.describe(f) for f in s.sent[sent0:]], "received": s.got - got0})
        finally:
            await s.close()
        assert tally.errors == [] and tally.silent == len(real["steps"])
        return seen

    with served(app_env(LENS_WARMUP="0")) as (url, _):
        seen = asyncio.run(ours(url))
    assert seen == real["steps"]


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")
def test_a_burst_of_a_page_and_sessions_steps_as_the_captured_step():
    """burst_bench on this tree: the page's step sends what the fixture says (the fixture is today's), the
    protocol sessions replay it, and the server hears nothing of the class's steps."""
    real = json.loads(STEP.read_text(encoding="utf-8"))

    with served(burst_bench.tree_env(ROOT)) as (url, proc):
        out = asyncio.run(burst_bench.burst(url, proc.pid, sessions=2, pages=1, rounds=3, gap=0.2))
    print(out)
    assert out["plan"] == real["steps"][0]["sent"] and out["plan_received"] == real["steps"][0]["received"]
    assert out["error_count"] == 0 and out["page_steps"] == 3
    assert out["page_frames_sent_per_step"] == out["session_frames_sent_per_step"] == len(out["plan"])
    assert out["session_frames_received_per_step"] == out["page_frames_received_per_step"]
    assert 0 < out["page_p50_ms"] <= out["page_max_ms"] < 60_000


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason=f"no Chromium at {CHROMIUM}")
def test_ten_concurrent_sessions_step_without_error():
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
    from attention_lens.app import registry
    from streamlit.testing.v1 import AppTest

    monkeypatch.setattr(registry, "SOURCES", [registry.operator_entries])
    monkeypatch.setenv("LENS_MODEL_DIRS", str(tiny_ckpt))
    monkeypatch.setenv("LENS_DEFAULT_MODEL", tiny_ckpt.name)
    st.cache_resource.clear()
    at = AppTest.from_file(ENTRY, default_timeout=90)
    at.session_state["preset"] = "custom"
    at.session_state["source"] = "the cat sat ."
    at.session_state["force_open"] = True  # the force box's expander, opened
    at.run()
    sizes = []
    for i in range(24):
        if i % 8 == 7 and at.session_state["forced"]:
            at.button(key="unforce").click().run()
        elif i % 3 == 2 and at.selectbox(key="force_choice") is not None:
            box = at.selectbox(key="force_choice")  # the box starts empty: pick a candidate, then force it
            box.set_value(box.options[0]).run()
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
        from streamlit.proto.Element_pb2 import Element

        md, nxt, fig = Element(), Element(), Element()
        md.markdown.body = f"**Step {step} of 9**"
        nxt.button.id, nxt.button.label = "$$ID-1-next", "Next"
        fig.plotly_chart.id, fig.plotly_chart.spec = "$$ID-2-attention", spec
        self.page = {(0, i): Shown(e, "frag", run_id, 0.0) for i, e in enumerate((md, nxt, fig))}

    def answer(self, step: int, spec: str):
        async def rerun(trigger=None):
            import time

            assert trigger is not None and trigger.element.button.label == "Next"
            self.draw(step, spec, "r1")
            return Run(run_id="r1", finished=time.perf_counter())

        self.rerun = rerun
        return self


@pytest.mark.parametrize(("step", "spec", "verified"), [(2, "B", True), (1, "B", False), (2, "A", False),
                                                        (3, "B", False)])
def test_a_click_counts_only_when_the_step_and_the_figure_advanced(step, spec, verified):
    latency, why = asyncio.run(click_next(FakeServer(1, "A").answer(step, spec)))
    assert (latency is not None, why is None) == (verified, verified), why


def test_the_client_holds_widget_values_as_the_frontend_does():
    """A widget starts on its default, keeps what the user set, takes what the app set (set_value), and is
    forgotten once a run no longer draws it; the click carries every held value and the trigger."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    from harness.st_client import Session

    s = Session("http://127.0.0.1:1/?model=x")

    def run(run_id: str, elements: list, fragment: str = "") -> None:
        start = ForwardMsg()
        start.metadata.run.script_run_id = run_id
        start.new_session.page_script_hash = "h"
        s._handle(start, 0.0)
        for i, fill in enumerate(elements):
            msg = ForwardMsg()
            msg.metadata.delta_path.extend([0, i])
            msg.delta.fragment_id = fragment
            fill(msg.delta.new_element)
            s._handle(msg, 0.0)
        done = ForwardMsg()
        done.script_finished = 0
        s._handle(done, 0.0)

    def toggle(value=None):
        def fill(el):
            el.checkbox.id, el.checkbox.default = "$$ID-a-present", False
            if value is not None:
                el.checkbox.value, el.checkbox.set_value = value, True
        return fill

    def step(el):
        el.slider.id = "$$ID-b-step"
        el.slider.default.append(1.0)

    def nxt(el):
        el.button.id = "$$ID-c-next"

    run("r1", [toggle(), step, nxt])
    assert {w.id: w.WhichOneof("value") for w in s.values.values()} == {"$$ID-a-present": "bool_value",
                                                                       "$$ID-b-step": "double_array_value"}
    s.rerun_message(present=True)
    assert s.values["$$ID-a-present"].bool_value is True
    run("r2", [toggle(), step, nxt])  # redrawn without set_value: the user's value stays
    assert s.values["$$ID-a-present"].bool_value is True
    run("r3", [toggle(False), nxt])  # the app set it back; the slider is gone
    assert s.values["$$ID-a-present"].bool_value is False and "$$ID-b-step" not in s.values
    msg = s.rerun_message(trigger=find(s.page, "button", key="next"))
    cs = msg.rerun_script
    assert [w.id for w in cs.widget_states.widgets] == ["$$ID-a-present", "$$ID-c-next"]
    assert cs.widget_states.widgets[-1].trigger_value and cs.page_script_hash == "h"
    assert cs.query_string == "model=x" and cs.context_info.url == "http://127.0.0.1:1/?model=x"
