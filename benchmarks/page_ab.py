"""One page of two checkouts side by side: alternating new-visitor loads in Chromium, with the moments a
student sees things appear.

Both trees are served at once (`streamlit run`, file watcher off), idle while the other is loaded; loads
alternate A B, B A, ... (each a new browser context, nothing cached; the first pair is a warm-up and not
counted), so a machine whose speed drifts within minutes gives both sides the same drift. For each load, ms
since navigation until: the page's title is drawn, the script has finished (`notRunning`), the first select
box is drawn (lazy element code loaded), the ranking table, the first chart element and every chart drawn,
and the page settled as in page_times.py. Prints one JSON line per tree: the medians and every settled time.

    .venv/bin/python benchmarks/page_ab.py /tmp/old-worktree . --n 10 --path Alignment
    .venv/bin/python benchmarks/page_ab.py http://127.0.0.1:8501 . --path Alignment   # a running server (nginx)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.page_times import SETTLED, TIMEOUT, start  # noqa: E402
from tests.fixtures.browser import CHROMIUM, LAUNCH_ARGS, free_port  # noqa: E402

# Runs in the page from navigation on: resolves with the first time (performance.now(), ms) each milestone held.
PROBE = """() => new Promise(resolve => {
  const out = {}, mark = (k, ok) => { if (!(k in out) && ok) out[k] = Math.round(performance.now()); };
  const tick = () => {
    const app = document.querySelector('[data-testid=stApp]');
    const charts = [...document.querySelectorAll('[data-testid=stEChartsChart], .js-plotly-plot, .lens-svg')];
    const drawn = c => !!c.querySelector('svg, canvas');
    mark('title', document.querySelector('h1'));
    mark('notRunning', app && app.getAttribute('data-test-script-state') === 'notRunning'
                       && document.querySelector('h1'));
    mark('widget', document.querySelector('[data-testid=stSelectbox]'));
    mark('table', document.querySelector('.lens-rank, [data-testid=stTable], [data-testid=stDataFrame]'));
    mark('chart_element', charts.length > 0);
    mark('charts_drawn', charts.length > 0 && charts.every(drawn));
    if (('notRunning' in out && 'charts_drawn' in out) || performance.now() > 90000) resolve(out);  // never hang
    else requestAnimationFrame(tick);
  };
  tick();
})"""


def load(browser, url: str) -> dict[str, int]:
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    page.add_init_script(f"window.__lensProbe = ({PROBE})();")
    t0 = time.perf_counter()
    page.goto(url, wait_until="commit")
    out = page.evaluate("window.__lensProbe")
    page.wait_for_function(SETTLED, arg=[1], timeout=TIMEOUT)
    out["settled"] = round((time.perf_counter() - t0) * 1000)
    ctx.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("trees", nargs=2, help="two checkouts (e.g. a git worktree of an earlier commit), or the "
                                                "http:// address of a server already running")
    parser.add_argument("--n", type=int, default=10, help="counted loads per tree")
    parser.add_argument("--path", default="Alignment", help="page path ('' for Explore)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    procs, urls = [], []
    try:
        for tree in args.trees:
            if tree.startswith(("http://", "https://")):
                urls.append(f"{tree.rstrip('/')}/{args.path}")
                continue
            port = free_port()
            procs.append(start(Path(tree).resolve(), port))
            urls.append(f"http://127.0.0.1:{port}/{args.path}")
        runs: list[list[dict[str, int]]] = [[], []]
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            for i in range(args.n + 1):
                for k in ((0, 1) if i % 2 == 0 else (1, 0)):
                    out = load(browser, urls[k])
                    if i:
                        runs[k].append(out)
            browser.close()
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(timeout=15)
    for tree, loads in zip(args.trees, runs):
        keys = [k for k in loads[0] if all(k in r for r in loads)]
        print(json.dumps({"tree": tree, "path": args.path, "n": len(loads),
                          **{f"{k}_ms": statistics.median(r[k] for r in loads) for k in keys},
                          "settled_all_ms": [r["settled"] for r in loads]}))


if __name__ == "__main__":
    main()
