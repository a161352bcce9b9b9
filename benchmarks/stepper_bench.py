"""Explore's stepping, a tree that runs the server on every step beside one whose stepper steps in the browser,
in one run: click to new row in Chromium, a held key, the server's CPU per step, a burst of pages stepping
together, how many pages this machine can drive, the packed run's bytes, and Explore's first picture.

Each tree is served as it is (`--old` / `--new`: checkouts, e.g. made with `git archive <commit>`; this venv runs
both). A click is timed inside the page, from the click to the first animation frame that shows the new row. A
page's step is "drawn" when the new row is on screen: for a tree with the stepper component, its
`data-step` (set in the same task that draws the canvas); for one without, the ECharts picture's description
naming the new last query (what the project's browser tests wait for).

    .venv/bin/python -m benchmarks.stepper_bench --old OLD_TREE --new NEW_TREE
    .venv/bin/python -m benchmarks.stepper_bench --bytes-only

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from harness.browser import launch
from harness.measure import cpu_seconds, explore_query, percentile, tree_env
from harness.server import served

TIMEOUT = 120_000
SENTENCE = "Where is the train station? I would like to buy two tickets to Paris for tomorrow morning."
STEPPER = "[data-testid=lens-stepper]"
# JS: the page shows step `index + 1` with its row drawn (either page).
DRAWN = """([index]) => {
    const s = document.querySelector('[data-testid=lens-stepper]');
    if (s) return s.dataset.step === String(index + 1) && !!s.querySelector('canvas');
    const el = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
    if (!el || el.getAttribute('aria-busy') !== 'false' || !el.querySelector('svg, canvas')) return false;
    return (el.getAttribute('aria-label') || '').includes('Last query: ' + index + ' '); }"""
NEXT = "[data-testid=lens-stepper] .lens-next, .st-key-next button:visible"  # (the stepper page hides its server bar)
FIRST = "[data-testid=lens-stepper] .lens-first, .st-key-reset button:visible"
# JS: click Next in the page and wait, frame by frame, until row `index` is drawn: ms from the click to the first
# animation frame that shows it (no round trip to Playwright inside the measured time).
CLICK = """async ([index]) => {
    const drawn = (""" + DRAWN + """);
    const b = document.querySelector('[data-testid=lens-stepper] .lens-next')
        || [...document.querySelectorAll('.st-key-next button')].find(e => e.offsetParent !== null);
    const t0 = performance.now(); b.click();
    while (!drawn([index])) await new Promise(r => requestAnimationFrame(r));
    await new Promise(r => requestAnimationFrame(r));
    return performance.now() - t0; }"""
M_OF = """() => { const s = document.querySelector('[data-testid=lens-stepper]'); if (s) return Number(s.dataset.m);
    const t = [...document.querySelectorAll('strong')].map(e => e.textContent).find(x => /^Step \\d+ of \\d+$/.test(x));
    return t ? Number(t.split(' of ')[1]) : 0; }"""


def query() -> str:
    return explore_query(SENTENCE)


async def open_page(browser, url: str, viewport=(1366, 768)):
    context = await browser.new_context(viewport={"width": viewport[0], "height": viewport[1]})
    page = await context.new_page()
    await page.goto(url + query(), timeout=TIMEOUT)
    await page.wait_for_function(DRAWN, arg=[0], timeout=TIMEOUT, polling=20)
    await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=TIMEOUT)
    return context, page


async def to_first(page) -> None:
    """Back to step 1 (untimed), unless there already."""
    if not await page.evaluate(DRAWN, [0]):
        await page.locator(FIRST).click()
        await page.wait_for_function(DRAWN, arg=[0], timeout=TIMEOUT, polling=5)
    await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=TIMEOUT)


async def click_steps(page, clicks: int) -> tuple[list[float], int]:
    """Click Next `clicks` times (First step, untimed, at the run's end): seconds from each click to its row."""
    m = await page.evaluate(M_OF)
    out, row = [], m - 1  # start from step 1 (untimed)
    for _ in range(clicks):
        if row >= m - 1:
            await to_first(page)
            row = 0
        out.append(await page.evaluate(CLICK, [row + 1]) / 1000)
        row += 1
        await page.wait_for_selector("[data-testid=stApp][data-test-script-state=notRunning]", timeout=TIMEOUT)
    return out, m


async def hold_key(page, seconds: float = 2.0, rate: float = 30.0) -> float:
    """ArrowRight pressed `rate` times a second (a held key's repeat) for `seconds`, from step 1: drawn steps
    per second (distinct steps seen drawn, sampled each animation frame, between the first and the last; at
    most `rate`)."""
    await to_first(page)
    await page.evaluate("""() => { window.__seen = []; const tick = () => {
        const s = document.querySelector('[data-testid=lens-stepper]');
        let step = s ? Number(s.dataset.step) : NaN;
        if (!s) { const el = document.querySelector('.st-key-attention [data-testid=stEChartsChart]');
            const m = (el && el.getAttribute('aria-label') || '').match(/Last query: (\\d+) /);
            step = m ? Number(m[1]) + 1 : NaN; }
        const last = window.__seen[window.__seen.length - 1];
        if (!last || last[1] !== step) window.__seen.push([performance.now(), step]);
        if (!window.__stop) requestAnimationFrame(tick); }; window.__stop = false; tick(); }""")
    # the key's repeat, inside the page: a keydown every 1/rate s on the page (what a held key sends)
    await page.evaluate("""([seconds, rate]) => new Promise(done => { let n = 0;
        const timer = setInterval(() => { document.body.dispatchEvent(new KeyboardEvent('keydown',
            {key: 'ArrowRight', bubbles: true, cancelable: true}));
            if (++n >= seconds * rate) { clearInterval(timer); done(); } }, 1000 / rate); })""", [seconds, rate])
    await page.wait_for_timeout(1500)  # what was still coming in
    seen = await page.evaluate("() => { window.__stop = true; return window.__seen; }")
    steps = [s for s in seen if s[1] > 1]
    if not steps:
        return 0.0
    span = (steps[-1][0] - steps[0][0]) / 1000  # from the first step drawn to the last
    return round((len(steps) - 1) / max(span, 1e-3), 1) if len(steps) > 1 else 0.0


async def measure_tree(url: str, pid: int, clicks: int, burst: int, rounds: int) -> dict:
    from playwright.async_api import async_playwright

    out: dict = {}
    async with async_playwright() as p:
        browser = await launch(p)
        try:
            t0 = time.perf_counter()
            context, page = await open_page(browser, url)
            out["first_picture_s"] = round(time.perf_counter() - t0, 2)
            warm = []
            for _ in range(3):
                t0 = time.perf_counter()
                c2, _p2 = await open_page(browser, url)
                warm.append(time.perf_counter() - t0)
                await c2.close()
            out["warm_picture_s"] = round(statistics.median(warm), 2)
            await click_steps(page, 3)  # warm
            c0 = cpu_seconds(pid)
            lat, m = await click_steps(page, clicks)
            out["server_cpu_ms_per_step"] = round(1000 * (cpu_seconds(pid) - c0) / clicks, 2)
            out["steps_in_run"] = m
            out["click_p50_ms"] = round(1000 * statistics.median(lat), 1)
            out["click_p95_ms"] = round(1000 * percentile(lat, 95), 1)
            out["held_key_steps_per_s"] = await hold_key(page)
            await context.close()
            # a burst: `burst` pages click Next at the same moment, `rounds` times
            pages = await asyncio.gather(*(open_page(browser, url) for _ in range(burst)))
            lat = []
            for r in range(rounds):
                async def one(pg, row=r):
                    return await pg.evaluate(CLICK, [row + 1]) / 1000
                lat += await asyncio.gather(*(one(pg) for _, pg in pages))
            out["burst_pages"] = burst
            out["burst_p50_ms"] = round(1000 * statistics.median(lat), 1)
            out["burst_p95_ms"] = round(1000 * percentile(lat, 95), 1)
            for c, _ in pages:
                await c.close()
        finally:
            await browser.close()
    return out


async def most_pages(url: str, pid: int, start: int, step: int, limit: int) -> dict:
    """Open pages `step` at a time until one fails to load or step within the timeout, or `limit`: the largest
    count where every page loaded and stepped, with the click p95 then and the server's CPU per step."""
    from playwright.async_api import async_playwright

    best: dict = {}
    async with async_playwright() as p:
        browser = await launch(p)
        pages = []
        try:
            n = start
            while n <= limit:
                try:
                    pages += await asyncio.gather(*(open_page(browser, url) for _ in range(n - len(pages))))
                    c0 = cpu_seconds(pid)

                    async def one(pg):
                        t = time.perf_counter()
                        await pg.locator(NEXT).click()
                        await pg.wait_for_function(DRAWN, arg=[1], timeout=30_000, polling=5)
                        await pg.locator(FIRST).click()
                        await pg.wait_for_function(DRAWN, arg=[0], timeout=30_000, polling=5)
                        return time.perf_counter() - t
                    lat = await asyncio.gather(*(one(pg) for _, pg in pages))
                    best = {"pages": n, "two_steps_p95_ms": round(1000 * percentile(lat, 95), 1),
                            "server_cpu_ms_per_step": round(1000 * (cpu_seconds(pid) - c0) / (2 * n), 2)}
                except Exception as exc:  # noqa: BLE001 - the first count that fails ends the climb
                    best["stopped_at"] = f"{n}: {type(exc).__name__}"
                    break
                n += step
        finally:
            await browser.close()
    return best


EVERYDAY_WORDS = ("Where is the train station ? I would like to buy two tickets to Paris for tomorrow morning , "
                  "please , and a map of the city .")
GRAMMAR_SOURCE = "the cat sat on the mat and the dog saw the old car near the river"
GRAMMAR_TARGET = "le chat s' assit sur le tapis et le chien vit la vieille voiture"


def fit(engine, words: list[str], tokens: int) -> str:
    """The shortest run of `words` whose source is at least `tokens` tokens as the engine reads it."""
    for k in range(1, len(words) + 1):
        text = " ".join(words[:k])
        if len(engine.prepare_source(text)[1]) >= tokens:
            return text
    raise ValueError(f"{len(words)} words make fewer than {tokens} tokens")


def packed_bytes() -> dict:
    """The packed run's bytes and largest error: everyday-en-fr on a 20-token sentence, and a random model of
    opus-mt's shape (6 + 6 layers x 8 heads) on 50 source and 50 target tokens."""
    from attention_lens.app.render import stepper
    from attention_lens.model.engine import DecodeOptions, load_engine

    from harness.models.tiny import build_tiny_checkpoint
    from harness.server import ROOT

    out = {}
    everyday = load_engine(ROOT / "checkpoints" / "everyday-en-fr")
    sentence = fit(everyday, EVERYDAY_WORDS.split(), 20)
    trace = everyday.trace(sentence)
    for enc in stepper.ENCODINGS:
        blob = stepper.pack(trace, encoding=enc)
        out[f"everyday_{enc}"] = {"source_tokens": trace.n, "steps": trace.m, "bytes": len(blob),
                                  "max_error": stepper.unpack(blob)[0]["max_error"]}
    folder = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "opus-shape", n_encoder_layers=6,
                                   n_decoder_layers=6, n_heads=8, d_model=64, max_positions=128)
    eng = load_engine(folder)
    source = fit(eng, GRAMMAR_SOURCE.split() * 8, 50)
    target_words = GRAMMAR_TARGET.split() * 8
    target = " ".join(next(target_words[:k] for k in range(1, len(target_words))
                           if len(eng.encode_target(" ".join(target_words[:k]), truncate=False)) >= 50))
    big = eng.trace(source, target, options=DecodeOptions(mode="teacher_forced"))
    for enc in stepper.ENCODINGS:
        blob = stepper.pack(big, encoding=enc, teacher=True)
        out[f"opus_shape_{enc}"] = {"source_tokens": big.n, "steps": big.m, "bytes": len(blob),
                                    "max_error": stepper.unpack(blob)[0]["max_error"]}
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", type=Path, help="a checkout whose Explore runs the server on every step")
    parser.add_argument("--new", type=Path, help="a checkout with the stepper component")
    parser.add_argument("--clicks", type=int, default=30)
    parser.add_argument("--burst", type=int, default=30)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--most", type=int, default=0, help="climb to this many pages on the new tree (0: skip)")
    parser.add_argument("--bytes-only", action="store_true")
    parser.add_argument("--no-bytes", action="store_true", help="the timings only")
    args = parser.parse_args(argv)
    result: dict = {} if args.no_bytes else {"bytes": packed_bytes()}
    if not args.bytes_only:
        for name, tree in (("old", args.old), ("new", args.new)):
            if tree is None:
                continue
            with served(tree_env(tree), tree=tree.resolve()) as (url, proc):
                result[name] = asyncio.run(measure_tree(url, proc.pid, args.clicks, args.burst, args.rounds))
                if name == "new" and args.most:
                    result["most_pages"] = asyncio.run(most_pages(url, proc.pid, 10, 10, args.most))
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
