"""Explore's view switches and step panels, a tree whose switches and panels run the server beside one whose stepper
does them in the browser, in one run: per kind / view switch and per step with a panel open (the key-value cache,
the logit lens, gradient saliency), the websocket frames the page sent, the bytes it received, the server's CPU
and the time from the key or click to the picture (or the panel) showing it.

Each tree is served as it is (`--old` / `--new`: checkouts, e.g. made with `git archive <commit>`; this venv runs
both). A switch is the stepper's own button where the tree has one (`.lens-viewbar`), else the Streamlit
segmented control (`.st-key-kind`, `.st-key-view`). Done when the picture's description names the new kind and
view and the page is idle.

    .venv/bin/python -m benchmarks.view_switch_bench --old OLD_TREE --new NEW_TREE

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

from harness.browser import IDLE, launch
from harness.measure import cpu_seconds
from harness.server import app_env, served

TIMEOUT = 300_000
SENTENCE = "the black dog and the old car saw the tired bird near the river on a cold day ."
STEPPER = "[data-testid=lens-stepper]"
TITLES = {"cross_attention": "Cross-attention", "decoder_self_attention": "Decoder self-attention",
          "encoder_self_attention": "Encoder self-attention"}
SHORT = {"cross_attention": "Cross", "decoder_self_attention": "Decoder", "encoder_self_attention": "Encoder",
         "grid": "Grid", "head": "Head", "mean": "Mean"}
SWITCHES = [("view", "head"), ("kind", "decoder_self_attention"), ("kind", "encoder_self_attention"),
            ("view", "mean"), ("kind", "cross_attention"), ("view", "grid")] * 2


def described(kind: str, view: str) -> str:
    """The start of the stepper's picture description for this kind and view (stepper.js: describe)."""
    return {"head": f"{TITLES[kind]} · layer ", "mean": f"{TITLES[kind]}, mean over heads:",
            "grid": f"{TITLES[kind]}: "}[view]


class Meter:
    def __init__(self, page):
        self.sent = self.received = 0
        page.on("websocket", lambda ws: (ws.on("framesent", self._sent), ws.on("framereceived", self._got)))

    def _sent(self, _data) -> None:
        self.sent += 1

    def _got(self, data) -> None:
        self.received += len(data if isinstance(data, bytes) else data.encode())


def idle(page) -> None:
    page.wait_for_timeout(350)  # a sync report leaves 300 ms after a step
    page.locator(IDLE).wait_for(timeout=TIMEOUT)


def switch(page, group: str, value: str) -> None:
    own = page.locator(f"{STEPPER} .lens-viewbar .lens-{group}s button[data-value={value}]")
    if own.count():
        own.click()
    else:
        page.locator(f".st-key-{group}").get_by_text(SHORT[value], exact=True).click()


def per_action(page, meter: Meter, pid: int, actions, done) -> dict:
    """Run each action, wait for `done(i)`, then for an idle page: frames sent, bytes received and server CPU per
    action; the median ms from an action to done."""
    frames, got, cpu = meter.sent, meter.received, cpu_seconds(pid)
    ms = []
    for i, act in enumerate(actions):
        t = time.perf_counter()
        act()
        done(i)
        ms.append(1000 * (time.perf_counter() - t))
        idle(page)
    n = len(ms)
    return {"actions": n, "frames_sent_per_action": round((meter.sent - frames) / n, 2),
            "bytes_received_per_action": round((meter.received - got) / n),
            "server_cpu_ms_per_action": round(1000 * (cpu_seconds(pid) - cpu) / n, 2),
            "median_ms_to_shown": round(statistics.median(ms), 1)}


def measure(url: str, pid: int, steps: int, panels: tuple[str, ...] = ("kv_cache", "logit_lens", "saliency")) -> dict:
    from playwright.sync_api import sync_playwright

    out: dict = {}
    q = f"/?model=en-fr&text={quote(SENTENCE)}&mode=greedy&kind=cross&view=grid&step=1"
    with sync_playwright() as p:
        browser = launch(p)
        try:
            page = browser.new_page(viewport={"width": 1366, "height": 900})
            meter = Meter(page)
            page.goto(url + q, timeout=TIMEOUT)
            try:
                page.locator(f"{STEPPER} canvas").first.wait_for(timeout=TIMEOUT)
            except Exception:
                print(page.inner_text("body")[-2000:], file=sys.stderr)  # what the page showed instead
                raise
            idle(page)
            page.keyboard.press("ArrowRight")
            idle(page)
            state = {"kind": "cross_attention", "view": "grid"}
            wanted = []
            for group, value in SWITCHES:
                state[group] = value
                wanted.append(described(state["kind"], state["view"]))

            def shown(i):
                page.wait_for_function(
                    "([s, w]) => (document.querySelector(s + ' .lens-picture').getAttribute('aria-label') || '')"
                    ".startsWith(w)", arg=[STEPPER, wanted[i]], timeout=TIMEOUT, polling=5)
            out["view_switch"] = per_action(page, meter, pid,
                                            [lambda g=g, v=v: switch(page, g, v) for g, v in SWITCHES], shown)
            m = int(page.locator(STEPPER).get_attribute("data-m"))
            n = min(steps, m - 2)
            for name, opener, check in (
                    ("kv_cache", lambda: page.get_by_text("Key–value cache at this step").click(),
                     "() => [...document.querySelectorAll('[data-testid=stMarkdownContainer] p, .lens-at-step p')]"
                     ".some(e => e.offsetParent !== null && e.textContent.startsWith('At step ' + {step} + ','))"),
                    ("logit_lens", lambda: page.get_by_role("switch", name="Logit lens").click(force=True),
                     "() => [...document.querySelectorAll('p')].some(e => e.offsetParent !== null && "
                     "e.textContent.startsWith('Logit lens at step ' + {step} + ':'))"),
                    ("saliency", lambda: page.get_by_role("switch", name="Gradient saliency").click(force=True),
                     None)):
                if name not in panels:
                    continue
                page.locator(f"{STEPPER} .lens-first").click()
                idle(page)
                frames, got, cpu = meter.sent, meter.received, cpu_seconds(pid)
                t = time.perf_counter()
                opener()
                idle(page)
                page.wait_for_timeout(1500)
                idle(page)
                opened = {"open_frames_sent": meter.sent - frames, "open_bytes_received": meter.received - got,
                          "open_server_cpu_ms": round(1000 * (cpu_seconds(pid) - cpu), 1),
                          "open_s": round(time.perf_counter() - t, 2)}
                page.locator(STEPPER).click(position={"x": 5, "y": 200})  # the keys are the stepper's again
                idle(page)

                def at_step(i, check=check):
                    if check:
                        page.wait_for_function(check.replace("{step}", str(i + 2)), timeout=TIMEOUT, polling=5)
                    else:
                        page.wait_for_timeout(350)
                        page.locator(IDLE).wait_for(timeout=TIMEOUT)
                out[name] = {**opened, **per_action(page, meter, pid,
                                                    [lambda: page.keyboard.press("ArrowRight")] * n, at_step)}
                opener()  # closed again
                idle(page)
        finally:
            browser.close()
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="a checkout whose view switches run the server")
    parser.add_argument("--new", type=Path, help="a checkout whose stepper switches views in the browser")
    parser.add_argument("--steps", type=int, default=8, help="steps taken with each panel open")
    parser.add_argument("--panels", default="kv_cache,logit_lens,saliency",
                        help="the panels opened in turn (comma-separated; saliency is slow to open on a CPU)")
    args = parser.parse_args(argv)
    result: dict = {}
    for name, tree in (("old", args.old), ("new", args.new)):
        if tree is None:
            continue
        env = app_env(LENS_WARMUP="0", LENS_DEFAULT_MODEL="en-fr")
        env["PYTHONPATH"] = os.pathsep.join([str(tree / "pkg"), str(tree)])
        with served(env, tree=tree.resolve()) as (url, proc):
            result[name] = measure(url, proc.pid, args.steps, tuple(args.panels.split(",")))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
