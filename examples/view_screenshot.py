"""Draw the notebook view of a trace in Chromium and save a screenshot (assets/notebook-view-1366.png).

    .venv/bin/python examples/view_screenshot.py [--out assets/notebook-view-1366.png]

The view is the HTML that `attention_lens.show(trace)` gives a notebook, saved as a page and opened from the file
system: no server and no network, as a reader of a saved notebook would see it.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import attention_lens

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=str(ROOT / "assets" / "notebook-view-1366.png"))
    parser.add_argument("--model", default=str(ROOT / "checkpoints" / "everyday-en-fr"))
    parser.add_argument("--text", default="Where is the train station?")
    parser.add_argument("--step", type=int, default=4)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    trace = attention_lens.load(args.model, device="cpu").trace(args.text)
    view = attention_lens.show(trace, kind="cross", step=args.step)
    with tempfile.TemporaryDirectory() as tmp:
        page_path = view.save(Path(tmp) / "view.html")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1366, "height": 768})
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith("file:")
                       else route.abort())  # offline: any request for the network fails
            page.goto(page_path.as_uri())
            page.wait_for_selector(".al-view[data-ready='1']")
            page.screenshot(path=args.out)
            browser.close()
    print(args.out)


if __name__ == "__main__":
    main()
