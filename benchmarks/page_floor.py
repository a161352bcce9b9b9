"""The floor under page_times.py's Explore figure: how long a fresh browser takes to show a Streamlit page that
holds nothing but one plotly chart, on this machine.

Writes two throw-away apps into a temporary folder and times each as page_times.py times Explore (a new browser
context per load, nothing cached, until the chart's first row is drawn; median of --n):
- bare: a title and one 1 x 2 heatmap;
- grid: a title and Explore's own first figure (shipped en-fr, "the cat sat .", cross-attention, every layer x
  head at step 1, built by app.render.views exactly as the page builds it).
What Explore takes beyond `grid` is the rest of the page (its ~100 elements, sidebar, styles).

    .venv/bin/python benchmarks/page_floor.py --n 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.page_times import explore, start  # noqa: E402
from tests.fixtures.browser import CHROMIUM, LAUNCH_ARGS, free_port  # noqa: E402

APP = """import plotly.io as pio
import streamlit as st
st.set_page_config(layout="wide")
st.title("floor")
st.plotly_chart(pio.from_json(open({path!r}).read(), skip_invalid=True), key="attention", theme=None)
"""


def figures(folder: Path) -> dict[str, Path]:
    import plotly.graph_objects as go

    from app.render import views
    from model.engine import DecodeOptions, load_engine

    trace = load_engine(str(ROOT / "checkpoints" / "en-fr")).trace("the cat sat .", options=DecodeOptions())
    grid = views.attention_figure(trace, "cross_attention", "grid", 1)
    bare = go.Figure(go.Heatmap(z=[[0.1, 0.9]], x=["0 a", "1 b"], y=["0 x"]))
    out = {}
    for name, fig in (("bare", bare), ("grid", grid)):
        (folder / f"{name}.json").write_text(fig.to_json())
        (folder / name / "app").mkdir(parents=True)
        (folder / name / "app" / "streamlit_app.py").write_text(APP.format(path=str(folder / f"{name}.json")))
        out[name] = folder / name
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    result = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
        for name, tree in figures(Path(tmp)).items():
            port = free_port()
            proc = start(tree, port)
            try:
                url = f"http://127.0.0.1:{port}"
                explore(browser, url)  # the server's first page
                took = [explore(browser, url)[0] for _ in range(args.n)]
                result[f"{name}_s"] = round(statistics.median(took), 2)
            finally:
                proc.terminate()
                proc.wait(timeout=15)
        browser.close()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
