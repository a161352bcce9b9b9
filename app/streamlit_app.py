"""Entry point: `streamlit run app/streamlit_app.py`. Navigation only.

The Explore page is the default; every page is one module of app/screens (listed in PAGES, in menu order),
run by Streamlit as a script. There is no `pages/` folder: Streamlit builds its own automatic menu from a
folder of that name, which showed up on direct links before `st.navigation` ran.
"""

from __future__ import annotations

import gc
from pathlib import Path

import streamlit as st
from attention_lens.app import warmup
from attention_lens.app.render.preload import DATAFRAME, ECHARTS, PLOTLY, preload

SCREENS = Path(__file__).resolve().parent / "screens"
# (module, title, url path, icon); the first is the default page.
PAGES = [("explore", "Explore", "", ":material/search:"), ("leakage_lab", "Leakage lab", "Leakage_lab", None),
         ("alignment", "Alignment", "Alignment", None), ("heads", "Heads", "Heads", None),
         ("compare", "Compare", "Compare", None)]

# The tab's icon is a file of ours, served by this server: a material-icon or emoji favicon makes the browser fetch
# it from fonts.gstatic.com or a CDN on every rerun (an error offline).
ICON = Path(__file__).resolve().parents[1] / "assets" / "favicon.png"
st.set_page_config(page_title="Attention Lens", page_icon=str(ICON), layout="wide")
page = st.navigation([st.Page(str(SCREENS / f"{module}.py"), title=title, icon=icon, default=not url,
                              **({"url_path": url} if url else {}))
                      for module, title, url, icon in PAGES])
# Explore draws its charts with ECharts (app/screens/charts.py), Alignment as SVG (no chart code to preload), the
# other pages with plotly; Leakage lab also draws data grids (app/render/preload.py)
preload(*{"": [ECHARTS], "Alignment": [], "Leakage_lab": [PLOTLY, DATAFRAME]}.get(page.url_path, [PLOTLY]))
try:
    with warmup.script_run():  # the warm-up starts no piece while a page's script runs
        page.run()
finally:  # once per server, after its first page's script run: the first export, head switch-off and Leakage lab
    warmup.start()  # plot, paid in the background (app/warmup.py)
if not gc.get_freeze_count():  # once per process, after the first page run has imported torch, pandas, plotly:
    gc.collect()  # their ~250k objects leave the collector's reach, so the full collection Streamlit runs
    gc.freeze()   # after every script run (runner.postScriptGC) scans only what the sessions made since
