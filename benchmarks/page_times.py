"""How long a student waits for a page, in Chromium (Playwright) against `streamlit run` of a tree.

- explore_first_s: a fresh server's first page, to its first heatmap (the attention chart drawn);
- explore_warm_s: median of --n further page loads (each a new browser context) to the first heatmap;
- explore_reload_s: median of --n reloads of one tab (the browser has the app's scripts cached);
- broken_first_s / broken_again_s: Leakage lab, click "Broken models", until the page is idle with every
  chart drawn (the first open on this server, then once more in a new page);
- alignment_first_s / alignment_again_s: the Alignment page opened by URL, until idle with every chart drawn
  (the first open on this server, then the median of --n more, each in a new browser context).

--only explore|broken|alignment times one page only (its first open still comes first).

--old TREE --rounds N: Broken models only, two checkouts side by side in one run: each round starts a fresh server
of TREE, then of --tree (default: this checkout), and times broken_first_s and broken_again_s on each; the medians
over the rounds and their ratio old / new. A tree made with `git archive COMMIT | tar -x -C DIR` imports its own
app when its attention_lens/ folder holds `app -> ../app` and `model -> ../model` symlinks (the installed package
points at this checkout otherwise).

"Idle" is Streamlit's own marker (data-test-script-state=notRunning) with no spinner left; a chart is drawn when
plotly has laid it out. --tree serves another checkout (e.g. a git worktree of an earlier commit) for a side by
side; its app runs on this venv.

    .venv/bin/python -m benchmarks.page_times --n 5
    .venv/bin/python -m benchmarks.page_times --quick        # each page once after its first open
    .venv/bin/python -m benchmarks.page_times --n 5 --tree OLD_TREE
    .venv/bin/python -m benchmarks.page_times --old OLD_TREE --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

from harness.browser import ROW_SHOWN, launch
from harness.server import ROOT, app_env, served

# JS: the script has finished, no spinner is left, and every chart on the page is laid out (at least `least`): a plotly
# figure, an ECharts chart, or an SVG drawing (Alignment).
SETTLED = """([least]) => {
    const app = document.querySelector('[data-testid=stApp]');
    if (!app || app.getAttribute('data-test-script-state') !== 'notRunning') return false;
    if (document.querySelector('[data-testid=stSpinner]')) return false;
    const charts = [...document.querySelectorAll('.js-plotly-plot, [data-testid=stEChartsChart], .lens-svg')];
    return charts.length >= least && charts.every(gd => gd.classList.contains('js-plotly-plot') ? !!gd._fullLayout
        : gd.classList.contains('lens-svg') ? !!gd.querySelector('svg')  // app/screens/charts.svg
        : gd.getAttribute('aria-busy') === 'false' && !!gd.querySelector('svg, canvas')); }"""
TIMEOUT = 240_000  # ms: a slow first open is a figure to report, not a reason to stop (Broken models took 54 s)
BROKEN = "[data-testid=stDataFrame]"  # the view's last element, its test-split table (the only table on the page)


def explore(browser, url: str, reloads: int = 0) -> list[float]:
    """Seconds to the first heatmap: a new browser context (nothing cached), then `reloads` reloads of the
    same tab (the browser's cache holds the app's scripts, as when a student opens the page again)."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    took = []
    for i in range(1 + reloads):
        t0 = time.perf_counter()
        page.goto(url) if i == 0 else page.reload()
        page.wait_for_function(ROW_SHOWN, arg=[0], timeout=TIMEOUT)
        took.append(time.perf_counter() - t0)
    ctx.close()
    return took


def settled_page(browser, url: str, click_text: str | None = None, shown: str | None = None) -> float:
    """Open url (and click a label, if given: timed from the click); seconds until the `shown` element is
    there (a CSS selector, if given) and the page has settled."""
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url)
    if click_text:
        page.wait_for_function(SETTLED, arg=[0], timeout=TIMEOUT)
        page.get_by_text(click_text, exact=True).first.click()
        t0 = time.perf_counter()
    if shown:
        page.locator(shown).first.wait_for(timeout=TIMEOUT)
    page.wait_for_function(SETTLED, arg=[1], timeout=TIMEOUT)
    took = time.perf_counter() - t0
    ctx.close()
    return took


def broken_on_fresh_server(browser, tree: Path) -> tuple[float, float]:
    """(broken_first_s, broken_again_s) on a fresh server of `tree`."""
    with served(app_env(), tree=tree) as (url, _):
        first = settled_page(browser, url + "/Leakage_lab", "Broken models", BROKEN)
        again = settled_page(browser, url + "/Leakage_lab", "Broken models", BROKEN)
    return first, again


def broken_side_by_side(browser, trees: dict[str, Path], rounds: int) -> dict[str, object]:
    """Broken models' first open and again, `rounds` fresh servers of each tree in turn: every figure, the
    medians and the ratio of the first tree's medians to the second's."""
    runs = {name: {"first": [], "again": []} for name in trees}
    for _ in range(rounds):
        for name, tree in trees.items():
            first, again = broken_on_fresh_server(browser, tree)
            runs[name]["first"].append(round(first, 2))
            runs[name]["again"].append(round(again, 2))
    out: dict[str, object] = {"trees": {k: str(v) for k, v in trees.items()}, "rounds": rounds, "runs": runs}
    (a, b) = trees
    for kind in ("first", "again"):
        medians = {name: statistics.median(runs[name][kind]) for name in trees}
        out[f"broken_{kind}_median_s"] = {name: round(m, 2) for name, m in medians.items()}
        out[f"broken_{kind}_{a}_over_{b}"] = round(medians[a] / medians[b], 2)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=5, help="warm Explore page loads")
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose app is served")
    parser.add_argument("--only", choices=["explore", "broken", "alignment"], help="time this page only")
    parser.add_argument("--quick", action="store_true", help="each page once more after its first open")
    parser.add_argument("--old", type=Path, help="Broken models only: this checkout against --tree, side by side")
    parser.add_argument("--rounds", type=int, default=5, help="with --old: fresh servers of each tree")
    args = parser.parse_args(argv)
    if args.quick:
        args.n = 1
    from playwright.sync_api import sync_playwright

    if args.old is not None:
        with sync_playwright() as p:
            browser = launch(p)
            out = broken_side_by_side(browser, {"old": args.old.resolve(), "new": args.tree.resolve()}, args.rounds)
            browser.close()
        out["load_average"] = [round(x, 1) for x in os.getloadavg()]
        print(json.dumps(out))
        return 0

    out: dict[str, object] = {"tree": str(args.tree)}
    with served(app_env(), tree=args.tree.resolve()) as (url, _), sync_playwright() as p:
        browser = launch(p)
        if args.only in (None, "explore"):
            out["explore_first_s"] = round(explore(browser, url)[0], 2)
            warm = [explore(browser, url)[0] for _ in range(args.n)]
            out.update(explore_warm_s=round(statistics.median(warm), 2), explore_warm_max_s=round(max(warm), 2))
            again = explore(browser, url, reloads=args.n)[1:]
            out.update(explore_reload_s=round(statistics.median(again), 2),
                       explore_reload_max_s=round(max(again), 2))
        if args.only in (None, "broken"):
            out["broken_first_s"] = round(settled_page(browser, url + "/Leakage_lab", "Broken models", BROKEN), 2)
            out["broken_again_s"] = round(settled_page(browser, url + "/Leakage_lab", "Broken models", BROKEN), 2)
        if args.only in (None, "alignment"):
            out["alignment_first_s"] = round(settled_page(browser, url + "/Alignment"), 2)
            again = [settled_page(browser, url + "/Alignment") for _ in range(args.n)]
            out.update(alignment_again_s=round(statistics.median(again), 2),
                       alignment_again_max_s=round(max(again), 2))
        browser.close()
    out["load_average"] = [round(x, 1) for x in os.getloadavg()]
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
