"""The floor under page_times.py's Explore figure: how long a fresh browser takes to show a Streamlit page that
holds nothing but a title and one chart (or no chart at all), on this machine.

Writes three throw-away apps into a temporary folder and times each as page_times.py times Explore (a new browser
context per load, nothing cached, until the chart is drawn; median of --n, the apps taken in turn):
- text: a title and one line of text (Streamlit's front end alone);
- plotly: Explore's first figure (shipped en-fr, "the cat sat .", cross-attention, every layer x head at
  step 1, built by app.render.views exactly as the page builds it) as a plotly chart, as Explore drew it until
  2026-12-03;
- echarts: the same figure as the ECharts option Explore draws now (app/render/echarts.py).
What Explore takes beyond `echarts` is the rest of the page (its ~55 elements, sidebar, styles).

    .venv/bin/python benchmarks/page_floor.py --n 7
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.page_times import TIMEOUT, start  # noqa: E402
from tests.fixtures.browser import CHROMIUM, LAUNCH_ARGS, ROW_SHOWN, free_port  # noqa: E402

HEAD = """import json
import streamlit as st
st.set_page_config(layout="wide")
st.title("floor")
"""
APPS = {
    "text": HEAD + 'with st.container(key="attention"):\n    st.markdown("<span class=\'probe\'>drawn</span>", '
                   'unsafe_allow_html=True)\n',
    "plotly": HEAD + "import plotly.io as pio\nst.plotly_chart(pio.from_json(open({path!r}).read(), "
                     "skip_invalid=True), key='attention', theme=None)\n",
    "echarts": HEAD + "opt = json.load(open({path!r}))\nst.echarts_chart(opt, key='attention', height=opt.pop('h'), "
                      "theme=None, renderer='svg')\n",
}
# JS per app: the page shows what it holds (the first row of the plotly figure: its heatmap's first y label).
DRAWN = {
    "text": "() => !!document.querySelector('.st-key-attention .probe')",
    "plotly": """() => { const gd = document.querySelector('.st-key-attention .js-plotly-plot');
        return !!gd && !!gd._fullData && gd.data.length > 0 && String(gd.data[0].y[0]).startsWith('0 '); }""",
    "echarts": ROW_SHOWN,
}


def write_apps(folder: Path) -> dict[str, Path]:
    from app.render import echarts, views
    from model.engine import DecodeOptions, load_engine

    trace = load_engine(str(ROOT / "checkpoints" / "en-fr")).trace("the cat sat .", options=DecodeOptions())
    fig = views.attention_figure(trace, "cross_attention", "grid", 1)
    (folder / "plotly.json").write_text(fig.to_json())
    (folder / "echarts.json").write_text(json.dumps({**echarts.option(fig), "h": int(fig.layout.height)}))
    out = {}
    for name, src in APPS.items():
        (folder / name / "app").mkdir(parents=True)
        (folder / name / "app" / "streamlit_app.py").write_text(src.format(path=str(folder / f"{name}.json")))
        out[name] = folder / name
    return out


def load(browser, url: str, drawn: str) -> float:
    ctx = browser.new_context(viewport={"width": 1500, "height": 1400})
    page = ctx.new_page()
    t0 = time.perf_counter()
    page.goto(url)
    page.wait_for_function(drawn, arg=[0], timeout=TIMEOUT)
    took = time.perf_counter() - t0
    ctx.close()
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=7)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    took: dict[str, list[float]] = {name: [] for name in APPS}
    procs = {}
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as p:
        try:
            for name, tree in write_apps(Path(tmp)).items():
                port = free_port()
                procs[name] = (start(tree, port), f"http://127.0.0.1:{port}")
            browser = p.chromium.launch(executable_path=CHROMIUM, args=LAUNCH_ARGS)
            for i in range(args.n + 1):  # the first round warms each server, not counted
                for name, (_, url) in procs.items():
                    t = load(browser, url, DRAWN[name])
                    if i:
                        took[name].append(t)
            browser.close()
        finally:
            for proc, _ in procs.values():
                proc.terminate()
                proc.wait(timeout=15)
    print(json.dumps({f"{name}_s": round(statistics.median(v), 2) for name, v in took.items()}))


if __name__ == "__main__":
    main()
