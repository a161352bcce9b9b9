"""Compare's shared step, a tree whose Compare runs the server on every step (a Streamlit slider; both sides and
their difference redrawn as plotly charts) beside one whose two sides and difference step in the browser (the pair
stepper, app/render/stepper/pair.js), in one run: key → both sides' new rows drawn in Chromium, the websocket
frames the page sent per step, and the server's CPU per step.

Each tree is a `git archive` checkout of a commit (made here, under --where), served by this venv in turn, with a
`pkg/attention_lens` of symlinks first on PYTHONPATH so it imports its own code. The page: Compare, the shipped
everyday-en-fr against everyday-en-fr-no-causal-mask on one sentence, cross-attention, layer 1, mean over heads.
A step is the right arrow key: on the old page pressed on the focused step slider (its only step control), on
the new one on the page (the stepper's key). It is timed inside the page, from the keydown's timestamp to the
first animation frame after both sides show the new step: old, both plotly pictures have its rows and A's
caption names it; new, the pair stepper's `data-step` (set in the task that draws both sides and A − B).

    .venv/bin/python -m benchmarks.compare_step_bench --old 140d7e2~1 --new 140d7e2
    .venv/bin/python -m benchmarks.compare_step_bench --new . --steps 1   # quick: this tree, one step

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from urllib.parse import urlencode

from harness.browser import IDLE, launch
from harness.measure import cpu_seconds, percentile, tree_env
from harness.server import ROOT, app_env, served

TIMEOUT = 300_000
SENTENCE = "Where is the train station? I would like to buy two tickets to Paris for tomorrow morning."
LINK = {"model": "everyday-en-fr", "a_text": SENTENCE, "b_model": "everyday-en-fr-no-causal-mask",
        "b_text": SENTENCE, "kind": "cross", "layer": "1", "head": "0", "step": "1"}
# JS: the page shows step `want` on both sides (either page).
SHOWN = """(want) => {
    const s = document.querySelector('[data-testid=lens-stepper].lens-pairmode');
    if (s) return s.dataset.step === String(want);
    const rows = (key) => { const gd = document.querySelector(`.st-key-${key} .js-plotly-plot`);
        const z = gd && gd._fullData && gd._fullData[0] && gd._fullData[0].z; return z ? z.length : -1; };
    const said = [...document.querySelectorAll('[data-testid=stCaptionContainer]')]
        .filter(e => e.innerText.startsWith(`Step ${want} of`)).length;
    return said === 2 && rows('cmp_a') === want && rows('cmp_b') === want; }"""
# JS: the steps both sides have (the shorter run's length).
M_OF = """() => { const sides = [...document.querySelectorAll('[data-testid=lens-pair-side]')];
    if (sides.length) return Math.min(...sides.map(e => Number(e.dataset.m)));
    const m = [...document.querySelectorAll('[data-testid=stCaptionContainer]')]
        .map(e => e.innerText.match(/^Step \\d+ of (\\d+)/)).filter(Boolean).map(x => Number(x[1]));
    return m.length ? Math.min(...m) : 0; }"""
# JS: watch, frame by frame, for step `want`; the first keydown's timestamp and the frame after it is shown.
ARM = """(want) => { window.__t0 = null; window.__t1 = null; let seen = false;
    const shown = (""" + SHOWN + """);
    const tick = () => { if (seen) { window.__t1 = performance.now(); return; }
        if (window.__t0 !== null && shown(want)) seen = true;
        requestAnimationFrame(tick); };
    requestAnimationFrame(tick); }"""
KEYDOWN = """() => { if (window.__keys) return; window.__keys = true;
    document.addEventListener('keydown', e => { if (window.__t0 === null) window.__t0 = e.timeStamp; }, true); }"""


def checkout(commit: str, where: Path) -> Path:
    """`commit`'s tree under where/tree, with where/tree/pkg/attention_lens importing that tree's own code."""
    tree = where / "tree"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit], cwd=ROOT, capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    pkg = tree / "pkg" / "attention_lens"
    pkg.mkdir(parents=True)
    for f in (tree / "attention_lens").glob("*.py"):
        shutil.copy(f, pkg / f.name)
    for name in ("app", "model"):
        (pkg / name).symlink_to(tree / name)
    return tree


async def frames_and_steps(page, sent: list, steps: int, old: bool) -> tuple[list[float], int]:
    """`steps` right-arrow steps from step 1 (back to 1 with Home, untimed, at the run's end): ms per step."""
    m = await page.evaluate(M_OF)
    await page.evaluate(KEYDOWN)
    if old:  # its only step control: the slider, focused
        await page.locator(".st-key-cmp_step input[type=range]").focus()
    else:
        await page.locator("h1").first.click()
    out, step = [], 1
    for _ in range(steps):
        if step >= m:
            await page.keyboard.press("Home")
            await page.wait_for_function(SHOWN, arg=1, timeout=TIMEOUT, polling=20)
            await page.wait_for_selector(IDLE, timeout=TIMEOUT)
            step = 1
        await page.evaluate(ARM, step + 1)
        await page.keyboard.press("ArrowRight")
        await page.wait_for_function("() => window.__t1 !== null", timeout=TIMEOUT, polling=10)
        out.append(await page.evaluate("() => window.__t1 - window.__t0"))
        step += 1
        await page.wait_for_selector(IDLE, timeout=TIMEOUT)
        await page.wait_for_timeout(300)  # the old slider's value reaches the server after its debounce
    return out, m


async def measure_tree(url: str, pid: int, steps: int, old: bool) -> dict:
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await launch(p)
        try:
            page = await (await browser.new_context(viewport={"width": 1366, "height": 768})).new_page()
            sent: list = []
            page.on("websocket", lambda ws: ws.on("framesent", lambda f: sent.append(f)))
            t0 = time.perf_counter()
            await page.goto(f"{url}/Compare?{urlencode(LINK)}", timeout=TIMEOUT)
            await page.wait_for_function(SHOWN, arg=1, timeout=TIMEOUT, polling=50)
            await page.wait_for_selector(IDLE, timeout=TIMEOUT)
            first = time.perf_counter() - t0
            await frames_and_steps(page, sent, 2, old)  # warm
            await page.keyboard.press("Home")
            await page.wait_for_function(SHOWN, arg=1, timeout=TIMEOUT, polling=20)
            await page.wait_for_selector(IDLE, timeout=TIMEOUT)
            await page.wait_for_timeout(500)
            n0, c0 = len(sent), cpu_seconds(pid)
            lat, m = await frames_and_steps(page, sent, steps, old)
            cpu = cpu_seconds(pid) - c0
            return {"steps_in_run": m, "steps_timed": steps, "first_page_s": round(first, 2),
                    "key_to_rows_p50_ms": round(statistics.median(lat), 1),
                    "key_to_rows_p95_ms": round(percentile(lat, 95), 1),
                    "frames_sent_per_step": round((len(sent) - n0) / steps, 2),
                    "server_cpu_ms_per_step": round(1000 * cpu / steps, 2)}
        finally:
            await browser.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", metavar="REV", help="a git revision to compare with (e.g. the commit "
                    "before the change); without it, this tree alone")
    parser.add_argument("--new", default="HEAD", help="a commit whose Compare steps in the browser, or a folder "
                                                      "(served as it is: `.`, this working tree)")
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--where", type=Path, help="where to make the checkouts (default: a temporary folder)")
    args = parser.parse_args(argv)
    result: dict = {"page": LINK}
    with tempfile.TemporaryDirectory(prefix="compare_bench_") as tmp:
        where = args.where or Path(tmp)
        for name, commit in (("old", args.old), ("new", args.new)):
            if commit is None:
                continue
            if Path(commit).is_dir():  # a folder, served as it is, with this venv's own package
                sha, tree = str(Path(commit).resolve()), Path(commit).resolve()
                env = app_env(LENS_WARMUP="0")
            else:
                sha = subprocess.run(["git", "rev-parse", "--short", commit], cwd=ROOT, capture_output=True,
                                     text=True, check=True).stdout.strip()
                tree = checkout(sha, where / name)
                env = tree_env(tree)
            with served(env, tree=tree) as (url, proc):
                result[name] = {"commit": sha, **asyncio.run(measure_tree(url, proc.pid, args.steps,
                                                                          old=name == "old"))}
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
