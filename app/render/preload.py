"""Start fetching and evaluating the browser's heaviest chunks as soon as a page opens.

Streamlit's front end loads each element's code the first time such an element arrives: plotly's chart chunk
alone is 4.7 MB (ECharts' 1.2 MB), requested only when the page's first chart is drawn, then fetched, compiled
and run before anything is shown (plotly's, measured in Chromium on a warm server: requested ~0.3 s after the
first message, drawn ~1.3 s after that). A page calls `preload` first thing, so the chunks it will need are
imported while the rest of its script still runs; the front end's own import later finds the same module
(same URL) ready.
Nothing is shown: the container is hidden, and the script only imports modules Streamlit itself ships.
"""

from __future__ import annotations

import functools
import json
from pathlib import Path

import streamlit as st

JS_DIR = Path(st.__file__).resolve().parent / "static" / "static" / "js"
PLOTLY, ECHARTS, DATAFRAME = "PlotlyChart", "EChartsChart", "DataFrame"


@functools.cache
def chunk(component: str) -> str | None:
    """The installed front end's file for a component (`PlotlyChart.<hash>.js`), or None if not exactly one."""
    hits = sorted(p.name for p in JS_DIR.glob(f"{component}.*.js"))
    return hits[0] if len(hits) == 1 else None


def preload(*components: str) -> None:
    names = [n for n in map(chunk, components) if n]
    if not names:
        return
    script = ("(() => { const main = document.querySelector('script[type=module][src*=\"/static/js/index.\"]');"
              f" if (!main) return; for (const name of {json.dumps(names)})"
              " import(new URL(name, main.src).href).catch(() => {}); })();")
    with st.container(key="lens_preload"):
        # hidden with its layout wrapper too, which would otherwise add one gap (16 px) above the page's title
        st.html("<style>.st-key-lens_preload, [data-testid=stLayoutWrapper]:has(> .st-key-lens_preload) "
                f"{{display: none;}}</style><script>{script}</script>", unsafe_allow_javascript=True)
