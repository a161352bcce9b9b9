"""Screenshots at 1366 x 768 from a running app: Explore's key-value cache panel (timed),
the Leakage lab's three bug views, its training-vs-inference view and its Broken models view with the model
trained without the 1/sqrt(d_k) (en-fr-no-scaling's column: teacher-forced accuracy and free-running chrF from
its card beside the healthy en-fr's), on the shipped en-fr.

    .venv/bin/streamlit run app/streamlit_app.py --server.headless true --server.port 8720 &
    .venv/bin/python -m benchmarks.lessons_screenshots --port 8720 --out assets

Each view is brought to the top of the window (the key-value cache in two pictures: the cache drawing, then the
counts and the timing; training vs inference in two: the parting step and the meters, then the two pictures).
`--only NAME ...` takes only those pictures (file names without -1366.png: kv-cache, bug-after-softmax,
bug-swap-cross, bug-no-scaling, train-vs-inference, broken-models).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from urllib.parse import urlencode

from playwright.sync_api import sync_playwright

from harness.browser import launch

BLACK_CAT = ("the black cat sat on the mat .", "le chat noir s' assit sur le tapis .")
VIEWS = (("bugs", "Mask after the softmax", "bug-after-softmax", "Smallest row sum", BLACK_CAT),
         ("bugs", "Cross-attention arguments swapped", "bug-swap-cross", "Largest weight on later target tokens",
          BLACK_CAT),
         ("bugs", "No 1/√d_k scaling", "bug-no-scaling", "Mean row entropy, healthy", BLACK_CAT),
         ("exposure", None, "train-vs-inference", "The prefixes part", ("the cat sat .", "le chien s' assit .")),
         ("broken", None, "broken-models", "On this sentence", BLACK_CAT))
NAMES = ("kv-cache", *(v[2] for v in VIEWS))


def settle(page, text: str) -> None:
    """Wait for the text, then for Streamlit's running indicator to go."""
    page.get_by_text(text, exact=False).first.wait_for(timeout=120_000)
    for _ in range(120):
        if not page.locator("[data-testid='stStatusWidget']").count():
            break
        page.wait_for_timeout(500)
    page.wait_for_timeout(1500)


# JS: scroll the element to the top of the page's scrolling area, `above` px below it (Streamlit's header covers
# the top 60 px of the window). The scrolling area is the first ancestor that scrolls (overflow auto or scroll):
# a markdown block's inner boxes are taller than their client height too, and scrolling one of them does nothing.
TO_TOP = """([e, above]) => { e.scrollIntoView({block: 'start'});
    const scrolls = (b) => b.scrollHeight > b.clientHeight && /auto|scroll/.test(getComputedStyle(b).overflowY);
    let box = e.parentElement; while (box && !scrolls(box)) box = box.parentElement;
    if (box) box.scrollBy(0, -above); }"""


def shoot(page, anchor, path: str | Path, above: int = 80) -> None:
    """anchor: a text on the page or a locator, brought to the top of the view (`above` px below it)."""
    target = page.get_by_text(anchor, exact=False).first if isinstance(anchor, str) else anchor
    page.evaluate(TO_TOP, [target.element_handle(), above])
    page.wait_for_timeout(800)
    page.screenshot(path=path)
    print(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=8720)
    ap.add_argument("--out", default="assets")
    ap.add_argument("--only", nargs="+", choices=NAMES, default=NAMES, metavar="NAME",
                    help=f"take only these pictures ({', '.join(NAMES)})")
    args = ap.parse_args()
    base = f"http://localhost:{args.port}"
    with sync_playwright() as p:
        browser = launch(p)
        page = browser.new_context(viewport={"width": 1366, "height": 768}, device_scale_factor=1).new_page()
        if "kv-cache" in args.only:
            kv_cache(page, base, args.out)
        for view, bug, name, anchor, (source, target) in VIEWS:
            if name not in args.only:
                continue
            page.goto(f"{base}/Leakage_lab?" + urlencode({"model": "en-fr", "text": source, "target": target,
                                                          "view": view}))
            settle(page, "Three more bugs")
            if bug:
                page.get_by_text(bug, exact=True).first.click()
                settle(page, anchor)
                shoot(page, page.locator(".st-key-leak_bug"), f"{args.out}/{name}-1366.png")
            elif view == "broken":
                settle(page, "free-running chrF")
                settle(page, "en-fr-no-scaling")
                shoot(page, anchor, f"{args.out}/{name}-1366.png")
            else:
                settle(page, anchor)
                shoot(page, anchor, f"{args.out}/{name}-1366.png")
                shoot(page, page.locator(".st-key-exp_step"), f"{args.out}/{name}-rows-1366.png")
        browser.close()


def kv_cache(page, base: str, out: str) -> None:
    """Explore at step 4 of the black cat: the cache drawing, then (timed) the counts and the timing."""
    page.goto(f"{base}/?" + urlencode({"model": "en-fr", "text": BLACK_CAT[0], "mode": "greedy", "kind": "dec",
                                       "view": "mean", "step": "4"}))
    settle(page, "Key–value cache at this step")
    page.get_by_text("Key–value cache at this step").first.click()
    settle(page, "decoder layers holds")
    page.get_by_text("Time this step on the server").first.click()
    settle(page, "Rows equal")
    shoot(page, "Key–value cache at this step", f"{out}/kv-cache-1366.png")
    shoot(page, page.locator("table").filter(has_text="with the cache").first,
          f"{out}/kv-cache-timing-1366.png")


if __name__ == "__main__":
    main()
