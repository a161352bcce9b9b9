"""What one step of Explore's stepper costs the browser: its script and the frame that shows the step.
Two versions of the stepper (app/render/stepper: stepper.js, pair.js, their CSS) from two trees or commits, fed
the same packed run (everyday-en-fr, greedy, the stepper benchmark's sentence) on a plain page in one Chromium, in
one run, each in every view asked for. Per step, from a Chromium performance trace of `--steps` arrow-key steps:
Paint events, Layout events and the layout objects they laid out, the renderer main thread's CPU ms by kind of
work (main_ms_*: all its tasks, the keys' script, style, layout, paint, commit), the DOM nodes the step changed (a
MutationObserver's records), and the time of the frame that draws it; and a held arrow key (a keydown every
1/30 s for 2 s): distinct steps drawn per second (at most 30).

    .venv/bin/python -m benchmarks.stepper_frames --old HEAD~1 --new .
    .venv/bin/python -m benchmarks.stepper_frames --new . --views grid --steps 4 --no-hold   (quick)

--old / --new: a folder (its working tree's files) or a git revision of this repository. --throttle N slows the
page's CPU N times (Chromium's CPU throttling: a loaded machine, reproducibly). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics

from harness.stepper_page import STEPS, packed_run, stepper_files, stepper_page, traced_steps

# JS: a held arrow key (a keydown every 1/rate s for `seconds`, from step 1): distinct steps drawn a second, seen
# each animation frame, from the first step drawn to the last.
HOLD = """async ([seconds, rate]) => {
  const s = document.querySelector('[data-testid=lens-stepper]');
  const raf = () => new Promise(r => requestAnimationFrame(r));
  document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'Home', bubbles: true, cancelable: true}));
  await raf(); await raf();
  const seen = []; let stop = false;
  const tick = (t) => { const st = Number(s.dataset.step); if (!seen.length || seen[seen.length - 1][1] !== st)
    seen.push([performance.now(), st]); if (!stop) requestAnimationFrame(tick); };
  requestAnimationFrame(tick);
  await new Promise(done => { let n = 0; const timer = setInterval(() => {
    document.body.dispatchEvent(new KeyboardEvent('keydown', {key: 'ArrowRight', bubbles: true, cancelable: true}));
    if (++n >= seconds * rate) { clearInterval(timer); done(); } }, 1000 / rate); });
  await new Promise(r => setTimeout(r, 800)); stop = true;
  const steps = seen.filter(x => x[1] > 1);
  if (steps.length < 2) return 0;
  return (steps.length - 1) / ((steps[steps.length - 1][0] - steps[0][0]) / 1000);
}"""


def measure(browser, files: dict[str, str], run: bytes, steps: int, hold: bool, throttle: float) -> dict:
    page = stepper_page(browser, files, run)
    try:
        if throttle > 1:
            cdp = page.context.new_cdp_session(page)
            cdp.send("Emulation.setCPUThrottlingRate", {"rate": throttle})
        page.evaluate(STEPS, 3)  # warm
        got, counts = traced_steps(browser, page, steps)
        got_plain = page.evaluate(STEPS, steps)  # untraced: the frame times
        painted = counts.pop("painted")
        each = counts.pop("each")
        main = counts.pop("main_ms")
        out = {f"{k}_per_step": round(v / steps, 1) for k, v in counts.items()}
        out.update({f"main_ms_{k}": round(v / steps, 2) for k, v in main.items()})  # per step
        out["layout_objects_p50"] = statistics.median(each) if each else 0  # of one Layout
        out["dom_records_per_step"] = statistics.median(got["records"])
        out["frame_ms_p50"] = round(statistics.median(got_plain["ms"]), 1)
        out["frame_ms_max"] = round(max(got_plain["ms"]), 1)
        if hold:
            out["held_key_steps_per_s"] = round(page.evaluate(HOLD, [2, 30]), 1)
        out["painted_most"] = painted  # (node, Paint events in the traced steps)
        return out
    finally:
        page.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--old", help="a folder or git revision (e.g. HEAD~1); none: the new one alone")
    parser.add_argument("--new", default=".", help="a folder or git revision (default: this working tree)")
    parser.add_argument("--views", default="grid,mean,head", help="comma-separated views: grid, mean, head, layer")
    parser.add_argument("--kind", default="cross_attention")
    parser.add_argument("--steps", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=1, help="measure the trees by turns this many times")
    parser.add_argument("--throttle", type=float, default=1.0)
    parser.add_argument("--no-hold", action="store_true", help="skip the held key")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from harness.browser import launch

    trees = {name: stepper_files(tree) for name, tree in (("old", args.old), ("new", args.new)) if tree}
    runs = {view: packed_run(view, args.kind) for view in args.views.split(",")}
    result: dict = {"trees": {"old": args.old, "new": args.new}, "steps": args.steps, "throttle": args.throttle}
    with sync_playwright() as p:
        browser = launch(p)
        try:
            for view, run in runs.items():
                rounds: dict[str, list[dict]] = {name: [] for name in trees}
                for _ in range(args.rounds):
                    for name, files in trees.items():
                        rounds[name].append(measure(browser, files, run, args.steps, not args.no_hold,
                                                    args.throttle))
                result[view] = {name: {k: (statistics.median(r[k] for r in got) if k != "painted_most"
                                           else got[-1][k]) for k in got[0]} for name, got in rounds.items()}
        finally:
            browser.close()
    print(json.dumps(result, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
