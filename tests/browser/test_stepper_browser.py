"""Explore's stepper in Chromium: every step's drawn row equals the Trace's weights within the packed run's
stated error (greedy, beam search, teacher forcing); stepping sends nothing to the server; the address bar,
Copy link and the exports follow the step on screen; the keys work after a click elsewhere; labels are readable
on a projector; the current row stays in view; only forced tokens look forced; no script error on coming back."""

from __future__ import annotations

import re
import time
from urllib.parse import parse_qs, quote, urlparse

import numpy as np
import pytest
from attention_lens.model.engine import DecodeOptions, load_engine

from harness.browser import IDLE, browser_page
from tests.fixtures.checkpoints import shipped_checkpoint

pytestmark = pytest.mark.browser

STEPPER = "[data-testid=lens-stepper]"
SENTENCE = "the old tired car laughs on the cat ."
F16_ERROR = 2.5e-4  # app/render/stepper: half floats, |w| <= 1; data-row rounds to 5 decimals
FIFTEEN = "the black dog and the old car saw the tired bird near the river on a cold day ."


@pytest.fixture(scope="module")
def engine():
    return load_engine(shipped_checkpoint("en-fr"))


def open_explore(url: str, query: str, width: int = 1366, height: int = 768):
    return browser_page(url + query, width, height, device_scale_factor=1)


def ready(page, step: int | None = None) -> None:
    page.locator(f"{STEPPER} canvas").first.wait_for(timeout=90_000)
    if step is not None:
        page.wait_for_function(f"() => document.querySelector('{STEPPER}').dataset.step === '{step}'",
                               timeout=30_000)


def counting_frames(page) -> list[float]:
    """The page reloaded with the websocket frames it sends counted from the start (the list returned gains one
    per frame: a click or a widget value reaching the server), then at step 1 with the script run finished."""
    sent: list[float] = []
    page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(time.monotonic())))
    page.reload()
    ready(page, 1)
    page.wait_for_selector(IDLE, timeout=60_000)
    return sent


def drawn_rows(page) -> list[dict]:
    return page.eval_on_selector_all(f"{STEPPER} .lens-panel", """els => els.map(e => ({
        layer: Number(e.dataset.layer), heads: e.dataset.heads.split(',').map(Number),
        row: JSON.parse(e.dataset.row)}))""")


def query(mode: str, kind: str, text: str = SENTENCE, target: str | None = None, view: str = "grid") -> str:
    q = f"?model=en-fr&text={quote(text)}&mode={mode}&kind={kind}&view={view}&step=1"
    return q + (f"&target={quote(target)}" if target is not None else "")


@pytest.mark.parametrize("mode", ["greedy", "beam", "teacher_forced"])
def test_every_step_draws_the_traces_row(shipped_server, engine, mode):
    target = "le vieux voiture fatigué rit sur le chat ." if mode == "teacher_forced" else None
    trace = engine.trace(SENTENCE, target, options=DecodeOptions(mode=mode, beam_size=4))
    shown = trace.beams[0] if mode == "beam" and trace.beams else trace
    for code, kind in (("cross", "cross_attention"), ("dec", "decoder_self_attention")):
        weights = getattr(shown, kind)
        with open_explore(shipped_server, query(mode, code, target=target)) as page:
            ready(page, 1)
            assert int(page.locator(STEPPER).get_attribute("data-m")) == shown.m
            for step in range(1, shown.m + 1):
                if step > 1:
                    page.keyboard.press("ArrowRight")
                ready(page, step)
                panels = drawn_rows(page)
                assert len(panels) == weights.shape[0] * weights.shape[1]
                for p in panels:
                    want = weights[p["layer"] - 1, p["heads"][0] - 1, step - 1]
                    row = p["row"]
                    keys = shown.n if kind == "cross_attention" else shown.m if mode == "teacher_forced" else step
                    assert len(row) == keys
                    seen = np.array([np.nan if v is None else v for v in row])
                    allowed = np.arange(keys) <= step - 1 if kind == "decoder_self_attention" else np.ones(keys, bool)
                    assert np.array_equal(~np.isnan(seen), allowed), (mode, kind, step)  # hatched: the future
                    np.testing.assert_allclose(seen[allowed], want[:keys][allowed], atol=F16_ERROR)


def test_twenty_steps_send_nothing_to_the_server(shipped_server):
    with open_explore(shipped_server, query("greedy", "cross", text=FIFTEEN)) as page:
        sent = counting_frames(page)
        page.wait_for_timeout(500)
        m = int(page.locator(STEPPER).get_attribute("data-m"))
        assert m >= 12
        page.locator(f"{STEPPER} .lens-next").click()  # a click on the stepper itself: nothing sent either
        ready(page, 2)
        before = len(sent)
        for key in ["ArrowRight"] * 10 + ["ArrowLeft"] * 10:  # 20 steps: to step 12 and back
            page.keyboard.press(key)
        ready(page, 2)
        page.wait_for_timeout(1000)
        assert len(sent) - before == 0  # not one message: no script run, no widget value


def test_url_copy_link_and_export_follow_the_step(shipped_server):
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        ready(page, 1)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        ready(page, 4)
        page.wait_for_function("() => new URL(location.href).searchParams.get('step') === '4'", timeout=10_000)
        page.get_by_role("button", name=re.compile("Copy link")).click()
        code = page.locator("[data-testid=stPopoverBody] code, [data-testid=stPopover] code").first
        code.wait_for(timeout=30_000)
        # the click reports the step on screen; the popover's link is the server run's that this click starts
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        page.wait_for_function("""() => { const c = document.querySelector(
            '[data-testid=stPopoverBody] code, [data-testid=stPopover] code');
            return !!c && new URL(c.innerText.trim()).searchParams.get('step') === '4'; }""", timeout=15_000)
        link = code.inner_text()
        assert parse_qs(urlparse(link.strip()).query)["step"] == ["4"]
        page.keyboard.press("Escape")
        page.locator(STEPPER).click(position={"x": 5, "y": 200})  # back on the stepper: its keys again
        page.keyboard.press("ArrowRight")
        ready(page, 5)
        page.get_by_text("Export this run").click()  # this click reports step 5: the server's run follows
        page.wait_for_timeout(300)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        button = page.get_by_role("button", name="CSV (long)")
        button.wait_for(timeout=30_000)
        with page.expect_download(timeout=60_000) as dl:
            button.click()
        assert "-step5" in dl.value.suggested_filename


def test_keys_step_after_clicking_a_toggle(shipped_server):
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        ready(page, 1)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        page.get_by_text("Norm-weighted", exact=True).click()  # a segmented control keeps the focus
        page.wait_for_timeout(300)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        page.keyboard.press("ArrowRight")
        ready(page, 2)
        page.get_by_role("switch", name="Logit lens").click(force=True)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        page.keyboard.press("End")
        m = page.locator(STEPPER).get_attribute("data-m")
        ready(page, int(m))


def test_keys_step_once_a_sentence_sent_with_enter_is_drawn(shipped_server):
    """A new sentence, Enter, its run drawn: the arrow keys step it at once (the focus stayed in the box, whose
    caret they moved, until a click elsewhere)."""
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        ready(page, 1)
        page.wait_for_selector(IDLE, timeout=60_000)
        box = page.locator(".st-key-source input")
        box.fill("the black dog saw the old car .")
        box.press("Enter")
        page.wait_for_function("() => new URL(location.href).searchParams.get('text') === "
                               "'the black dog saw the old car .'", timeout=60_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        ready(page, 1)
        page.keyboard.press("ArrowRight")
        ready(page, 2)


def test_labels_readable_on_a_projector(shipped_server):
    """Every row and column of a 15-word sentence labelled, at 12 px or more (one head); presenter mode 18 px
    or more, its input boxes too; all of it larger on a 1920-wide screen."""
    sizes = {}
    for width, height, present in ((1366, 768, 0), (1366, 768, 1), (1920, 1080, 0), (1920, 1080, 1)):
        with open_explore(shipped_server, query("greedy", "cross", text=FIFTEEN, view="head")
                          + f"&present={present}", width, height) as page:
            ready(page, 1)
            page.keyboard.press("End")
            page.wait_for_timeout(400)
            labels = page.eval_on_selector_all(
                f"{STEPPER} .lens-q:not(.hidden), {STEPPER} .lens-k", """els => els.map(e => ({
                    px: parseFloat(getComputedStyle(e).fontSize), thin: e.classList.contains('thin'),
                    q: e.classList.contains('lens-q')}))""")
            assert not [x for x in labels if x["thin"]], "a column without its label"
            m = int(page.locator(STEPPER).get_attribute("data-m"))
            assert sum(x["q"] for x in labels) == m  # every row labelled
            smallest = min(x["px"] for x in labels)
            assert smallest >= (18 if present else 12)
            sizes[(width, present)] = smallest
            if present:
                box = page.locator("[data-testid=stTextInput] input").first
                assert float(box.evaluate("e => parseFloat(getComputedStyle(e).fontSize)")) >= 18
    assert sizes[(1920, 0)] > sizes[(1366, 0)] and sizes[(1920, 1)] > sizes[(1366, 1)]


def test_the_current_row_stays_in_view(shipped_server):
    with open_explore(shipped_server, query("greedy", "dec", text=FIFTEEN + " " + FIFTEEN, view="head")) as page:
        ready(page, 1)
        m = int(page.locator(STEPPER).get_attribute("data-m"))
        assert m >= 20
        for step in range(2, m + 1):
            page.keyboard.press("ArrowRight")
            ready(page, step)
            page.wait_for_function("""() => {
                const o = document.querySelector('[data-testid=lens-stepper] .lens-outline');
                const r = o && o.getBoundingClientRect();
                return !!r && r.height > 0 && r.top >= 0 && r.bottom <= innerHeight + 1; }""", timeout=5_000)


def test_only_forced_tokens_look_forced(shipped_server, engine):
    plain = engine.trace(SENTENCE)
    other = next(tok for tok, _ in plain.steps[2].top_k if tok != plain.steps[2].token)
    forced = [plain.steps[0].id, plain.steps[1].id, engine.piece_to_id(other)]
    q = query("greedy", "cross") + "&forced=" + ",".join(map(str, forced)) + "&step=3"
    with open_explore(shipped_server, q.replace("&step=1", "")) as page:
        ready(page, 3)
        marked = page.eval_on_selector_all(f"{STEPPER} .lens-prefix .lens-chip",
                                           "els => els.map(e => e.classList.contains('forced'))")
        assert marked == [False, False, True]


def test_no_script_error_on_coming_back_to_explore(shipped_server):
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        errors = []
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        ready(page, 1)
        for _ in range(2):
            page.get_by_role("link", name="Heads").click()
            page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=90_000)
            page.get_by_role("link", name="Explore").click()
            ready(page)
            page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=90_000)
        page.keyboard.press("ArrowRight")
        ready(page, 2)
        assert not [e for e in errors if "already been declared" in e or "replaceChild" in e], errors


def _switch(page, kind: str | None = None, view: str | None = None, layer: int | None = None,
            head: int | None = None) -> None:
    """Kind / view (buttons) and layer / head (0-based, select boxes) in the stepper's own view bar."""
    bar = page.locator(f"{STEPPER} .lens-viewbar")
    if kind:
        bar.locator(f".lens-kinds button[data-value={kind}]").click()
    if view:
        bar.locator(f".lens-views button[data-value={view}]").click()
    if layer is not None:
        bar.locator(".lens-pick-layer").select_option(str(layer))
    if head is not None:
        bar.locator(".lens-pick-head").select_option(str(head))


def _check_drawn(page, shown, kind: str, view: str, layer: int, head: int, step: int) -> None:
    """The drawn panels are the view's (which layers and heads) and each one's current row is the Trace's row
    (the mean of its heads in the mean view) within the packed run's error."""
    weights = getattr(shown, kind)
    L, H = weights.shape[:2]
    want_panels = {"head": [(layer, [head])], "mean": [(lay, list(range(H))) for lay in range(L)],
                   "grid": [(lay, [h]) for lay in range(L) for h in range(H)]}[view]
    panels = drawn_rows(page)
    assert [(p["layer"] - 1, [h - 1 for h in p["heads"]]) for p in panels] == want_panels, (kind, view)
    if kind == "encoder_self_attention":
        return  # every source row is drawn at every step: no current row
    for p, (lay, heads) in zip(panels, want_panels, strict=True):
        want = weights[lay, heads, step - 1].mean(axis=0)
        keys = shown.n if kind == "cross_attention" else step
        seen = np.array([np.nan if v is None else v for v in p["row"]])
        np.testing.assert_allclose(seen[:keys], want[:keys], atol=F16_ERROR)


def test_copy_link_is_the_screens_state_with_nothing_sent(shipped_server):
    """Copy link's box is the address bar: open, it follows steps made in the page with not one frame sent (a
    server that has not heard them, busy or not, cannot make the link stale)."""
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        sent = counting_frames(page)
        page.get_by_role("button", name=re.compile("Copy link")).click()
        code = page.locator("[data-testid=stPopoverBody] code").first
        code.wait_for(timeout=30_000)
        page.wait_for_selector(IDLE, timeout=60_000)
        before = len(sent)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        ready(page, 4)
        page.wait_for_function("""() => { const c = document.querySelector('[data-testid=stPopoverBody] code');
            return !!c && new URL(c.innerText.trim()).searchParams.get('step') === '4'; }""", timeout=10_000)
        assert code.inner_text().strip() == page.evaluate("() => location.href")
        assert len(sent) == before  # the server heard nothing: the link is the page's own


def test_view_switches_send_nothing_and_draw_the_traces_heads(shipped_server, engine):
    """Kind, view, layer and head switched in the stepper twelve times, with steps between: not one websocket
    frame, every picture the Trace's weights for that kind / layer / head, the address bar follows; the server
    hears the view with the next other click (Copy link's link carries it)."""
    shown = engine.trace(FIFTEEN, options=DecodeOptions(mode="greedy"))
    with open_explore(shipped_server, query("greedy", "cross", text=FIFTEEN)) as page:
        sent = counting_frames(page)
        page.wait_for_timeout(500)
        before = len(sent)
        step = 1
        for _ in range(2):
            page.keyboard.press("ArrowRight")
            step += 1
        ready(page, step)
        state = {"kind": "cross_attention", "view": "grid", "layer": 0, "head": 0}
        switches = [{"view": "head"}, {"layer": 1}, {"head": 2}, {"kind": "decoder_self_attention"}, {"head": 3},
                    {"view": "mean"}, {"kind": "encoder_self_attention"}, {"view": "head"}, {"layer": 2},
                    {"kind": "cross_attention"}, {"view": "grid"}, {"view": "head"}]
        for i, change in enumerate(switches):
            _switch(page, **change)
            state |= change
            if i % 3 == 2:  # a step between switches, drawn in the new view
                page.keyboard.press("ArrowRight")
                step += 1
            ready(page, step)
            _check_drawn(page, shown, state["kind"], state["view"], state["layer"], state["head"], step)
        page.wait_for_function(
            "() => { const q = new URL(location.href).searchParams; return q.get('view') === 'head' && "
            "q.get('kind') === 'cross' && q.get('layer') === '3' && q.get('head') === '4' && "
            f"q.get('step') === '{step}'; }}", timeout=10_000)
        page.wait_for_timeout(800)
        assert len(sent) - before == 0  # no script run, no widget value: the view is switched in the page
        picture = page.locator(f"{STEPPER} .lens-picture").get_attribute("aria-label")
        assert picture.startswith("Cross-attention · layer 3 · head 4")
        page.get_by_role("button", name=re.compile("Copy link")).click()  # another click: the server hears it
        code = page.locator("[data-testid=stPopoverBody] code, [data-testid=stPopover] code").first
        code.wait_for(timeout=30_000)
        link = parse_qs(urlparse(code.inner_text().strip()).query)
        assert (link["kind"], link["view"], link["layer"], link["head"], link["step"]) == (
            ["cross"], ["head"], ["3"], ["4"], [str(step)])


def test_logit_lens_follows_the_step_with_nothing_sent(shipped_server, engine):
    """With the logit lens on, every step's table is on the page and the one shown is the stepper's step's;
    stepping sends nothing."""
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        sent = counting_frames(page)
        page.get_by_role("switch", name="Logit lens").click(force=True)
        page.wait_for_selector(".lens-at-step[data-step='1'] table.lens-layers", state="visible", timeout=60_000)
        page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=60_000)
        page.locator(STEPPER).click(position={"x": 5, "y": 200})  # back on the stepper
        page.wait_for_timeout(800)
        before = len(sent)
        m = int(page.locator(STEPPER).get_attribute("data-m"))
        for step in range(2, m + 1):
            page.keyboard.press("ArrowRight")
            ready(page, step)
            shown = page.eval_on_selector_all(".lens-at-step", "els => els.filter(e => e.offsetParent !== null)"
                                                               ".map(e => e.querySelector('p').textContent)")
            assert shown == [shown[0]] and shown[0].startswith(f"Logit lens at step {step}:")
        page.wait_for_timeout(800)
        assert len(sent) - before == 0


# How the Heads link is followed: a click (the step and view reported with its pointerdown), or a script's click with
# no pointer event, standing for a report that reaches the server after the Heads run has begun and is lost there
# (a clean-clone CI run came back to step 1 for 4).
FOLLOW = {"click": lambda page: page.get_by_role("link", name="Heads").click(),
          "unheard": lambda page: page.evaluate(
              "() => [...document.querySelectorAll('a')].find(a => a.textContent.trim() === 'Heads').click()")}


@pytest.mark.parametrize("follow", FOLLOW)
def test_step_and_view_switched_in_the_page_survive_another_page(shipped_server, follow):
    """Stepped and switched in the browser, then another page and back: the stepper shows that step and view and the
    address bar follows, whether the server heard them with the click on the link (a stepper mounted afresh is told
    the server's) or never did (the page keeps what was on screen and tells the server)."""
    with open_explore(shipped_server, query("greedy", "cross")) as page:
        ready(page, 1)
        page.wait_for_selector(IDLE, timeout=60_000)
        for _ in range(3):
            page.keyboard.press("ArrowRight")
        _switch(page, kind="decoder_self_attention", view="head", layer=2, head=1)
        ready(page, 4)
        FOLLOW[follow](page)
        page.wait_for_selector(IDLE, timeout=90_000)
        page.get_by_role("link", name="Explore").click()
        ready(page, 4)
        label = page.locator(f"{STEPPER} .lens-picture").get_attribute("aria-label")
        assert label.startswith("Decoder self-attention · layer 3 · head 2"), label
        page.wait_for_selector(IDLE, timeout=60_000)
        page.wait_for_function("() => new URL(window.location.href).searchParams.get('step') === '4'", timeout=10_000)
