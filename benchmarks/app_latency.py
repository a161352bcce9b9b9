"""How long does a step click take? Two medians, on the default model with all heads shown (the grid view):

- server: one Next click under Streamlit's AppTest (script rerun + figures, no browser), median of --server-n;
- browser: click the stepper's Next in Chromium until the new step's row is drawn in the attention picture,
  median of --browser-n (Playwright against `streamlit run`).

    .venv/bin/python -m benchmarks.app_latency                    # shipped en-fr (or a tiny random model)
    .venv/bin/python -m benchmarks.app_latency --model DIR --kind decoder_self_attention
    .venv/bin/python -m benchmarks.app_latency --quick            # a tiny random model, 2 + 2 clicks

A measurement, not a test: it prints the numbers and one JSON line. benchmarks/run_all.py writes part 4 of
RESULTS.md with these functions.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from pathlib import Path

from harness.browser import CHROMIUM, ROW_SHOWN, SOURCE_SHOWN, browser_page
from harness.measure import STEPPER_NEXT, time_next_clicks
from harness.server import ROOT, served

SOURCE = "the black cat sat on the mat ."


def model_env(model: str | None, tiny: bool = False) -> tuple[dict[str, str], str]:
    """Environment for the app: a named folder, else the shipped en-fr, else (or with `tiny`) a tiny random
    checkpoint."""
    env = dict(os.environ)
    if model:
        path = Path(model).resolve()
        env.update(LENS_MODEL_DIRS=str(path), LENS_DEFAULT_MODEL=str(path))
        return env, path.name
    if not tiny and (ROOT / "checkpoints" / "en-fr" / "config.json").is_file():
        env["LENS_DEFAULT_MODEL"] = "en-fr"
        return env, "en-fr"
    from harness.models.tiny import build_tiny_checkpoint

    path = build_tiny_checkpoint(Path(tempfile.mkdtemp()) / "tiny-random")
    env.update(LENS_MODEL_DIRS=str(path), LENS_DEFAULT_MODEL=str(path))
    return env, f"{path.name} (random weights)"


def server_clicks(env: dict[str, str], n: int, kind: str) -> list[float]:
    from streamlit.testing.v1 import AppTest

    os.environ.update(env)
    at = AppTest.from_file(str(ROOT / "app" / "streamlit_app.py"), default_timeout=120)
    at.session_state["source"] = SOURCE
    at.session_state["preset"] = "custom"
    at.session_state["kind"] = kind
    at.run()
    return next_clicks(at, n)


def next_clicks(at, n: int) -> list[float]:
    """Seconds of n Next clicks of a run AppTest page (back to step 1 when the run's last step is reached)."""
    if at.exception:
        raise RuntimeError(at.exception[0].message)
    times = []
    while len(times) < n:
        if at.button(key="next").disabled:
            at.button(key="reset").click().run()
        t0 = time.perf_counter()
        at.button(key="next").click().run()
        times.append(time.perf_counter() - t0)
        if at.exception:
            raise RuntimeError(at.exception[0].message)
    return times


def browser_clicks(env: dict[str, str], n: int) -> list[float]:
    """Seconds from a Next click to the new row drawn in Chromium, n clicks on SOURCE in the page's grid."""
    with served(env) as (url, _), browser_page(url) as page:
        page.locator(STEPPER_NEXT).wait_for(timeout=120_000)
        box = page.locator(".st-key-source input, .st-key-source textarea")
        box.fill(SOURCE)
        box.press("Enter")
        page.wait_for_function(SOURCE_SHOWN, arg=[SOURCE.replace(" ", "")], timeout=120_000)
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=120_000)
        return time_next_clicks(page, n, timeout_ms=60_000).seconds


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", help="a model folder (default: checkpoints/en-fr, else a tiny random model)")
    ap.add_argument("--kind", default="cross_attention",
                    choices=["cross_attention", "decoder_self_attention", "encoder_self_attention"])
    ap.add_argument("--server-n", type=int, default=20)
    ap.add_argument("--browser-n", type=int, default=10)
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--quick", action="store_true", help="a tiny random model, 2 clicks each: checks that it runs")
    args = ap.parse_args(argv)
    if args.quick:
        args.server_n, args.browser_n = 2, 2
    env, name = model_env(args.model, tiny=args.quick)
    server = server_clicks(env, args.server_n, args.kind)
    result = {"model": name, "kind": args.kind, "view": "all layers x heads",
              "server_click_median_s": round(statistics.median(server), 4), "server_n": len(server)}
    print(f"server: one Next click, median of {len(server)}: {result['server_click_median_s'] * 1000:.0f} ms")
    if not args.no_browser and Path(CHROMIUM).exists():
        browser = browser_clicks(env, args.browser_n)
        result.update(browser_click_to_render_median_s=round(statistics.median(browser), 4), browser_n=len(browser))
        print(f"browser: click to rendered heatmap, median of {len(browser)}: "
              f"{result['browser_click_to_render_median_s'] * 1000:.0f} ms")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
