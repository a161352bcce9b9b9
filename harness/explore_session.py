"""Explore over Streamlit's websocket protocol (harness/st_client.py), as the load test and the replica tests
drive it: open a session on Explore at step 1 of a sentence (`open_explore`), read what the page shows
(`explore_view`: the step counter, Next, First step, the attention figure; the one place to adapt when the page
is reworked), and click Next, verified by the new step and the new figure (`click_verified`, `click_next`)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from harness.st_client import Run, Session, Shown, find

TEXT = "The black cat that the small dog chased sat on the mat near the bank of the river."
STEP_TEXT = re.compile(r"\*\*Step (\d+) of (\d+)\*\*")


@dataclass
class ExploreView:
    step: int | None
    total: int | None
    next: Shown | None
    figure: Shown | None
    reset: Shown | None = None


def explore_view(page: dict) -> ExploreView:
    """The Explore page's step counter, Next and First-step buttons and attention figure, found by text and key:
    the step and the picture are the stepper component's (key "stepper", app/render/stepper: the step the server
    gave it and its packed run), Next and First step the hidden server step bar's buttons (the stepper's own steps
    happen in the browser). The one place to adapt when the page is reworked."""
    step = total = None
    for path in sorted(page):
        el = page[path].element
        if el.WhichOneof("type") == "markdown" and (m := STEP_TEXT.fullmatch(el.markdown.body)):
            step, total = int(m[1]), int(m[2])
    figure = find(page, "bidi_component", key="stepper")
    if figure is not None:
        from attention_lens.app.render import stepper as packing

        header, _ = packing.unpack(figure.element.bidi_component.bytes)
        step, total = int(header["step"]), int(header["m"])
    else:
        figure = next((f for kind in ("echarts_chart", "plotly_chart") if (f := find(page, kind, key="attention"))),
                      None)
    return ExploreView(step, total, find(page, "button", key="next"), figure, find(page, "button", key="reset"))


def spec(shown: Shown) -> str | bytes:
    """What a picture element draws: the stepper's packed run (bytes), or a chart's spec (an ECharts option or a
    plotly figure, as JSON)."""
    proto = getattr(shown.element, shown.element.WhichOneof("type"))
    return proto.bytes if shown.element.WhichOneof("type") == "bidi_component" else proto.spec


# ---- one protocol session ------------------------------------------------------------------------------------
async def open_explore(url: str, text: str | None, timeout: float = 120) -> Session:
    """A session on the Explore page at step 1 of `text`'s decoding (raises if the page is not as expected)."""
    s = Session(url, timeout=timeout)
    run = await s.open()
    if text:
        run = await s.rerun(source=text)
    view = explore_view(s.page)
    if run.problems or view.step != 1 or view.next is None or view.figure is None:
        await s.close()
        raise RuntimeError(f"Explore page not at step 1: step {view.step}, problems {run.problems[:2]}")
    return s


@dataclass
class Click:
    """A verified click: seconds to its run's last message and to the new figure's frame; what the run sent."""

    seconds: float
    figure_seconds: float
    run: Run


async def click_next(s: Session) -> tuple[float | None, str | None]:
    """Click Next; (seconds until the run's last message arrived, None) when verified, else (None, why)."""
    click, why = await click_verified(s)
    return (click.seconds if click else None), why


async def click_verified(s: Session) -> tuple[Click | None, str | None]:
    before = explore_view(s.page)
    if before.next is None or before.next.element.button.disabled:
        return None, f"no enabled Next at step {before.step}"
    old_spec = spec(before.figure) if before.figure else None
    t0 = time.perf_counter()
    run = await s.rerun(trigger=before.next)
    after = explore_view(s.page)
    if run.problems:
        return None, run.problems[0]
    if after.step != before.step + 1:
        return None, f"step {before.step} -> {after.step}"
    fig = after.figure
    if fig is None or fig.run_id != run.run_id or spec(fig) == old_spec:
        return None, f"no new figure at step {after.step}"
    return Click(run.finished - t0, fig.arrived - t0, run), None


async def ready_to_click(s: Session) -> None:
    """At the run's last step, click First step (untimed): the session can go on clicking Next."""
    view = explore_view(s.page)
    if view.next is not None and view.next.element.button.disabled and view.reset is not None:
        run = await s.rerun(trigger=view.reset)
        if run.problems:
            raise RuntimeError(f"First step: {run.problems[0]}")
