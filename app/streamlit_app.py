"""Entry point: `streamlit run app/streamlit_app.py`. Navigation only.

The Explore page is the default; every page is one script of app/screens (listed in PAGES, in menu order),
run by Streamlit: a module, or a package's `page.py` (Explore's, app/screens/explore/). There is no `pages/`
folder: Streamlit builds its own automatic menu from a folder of that name, which showed up on direct links before
`st.navigation` ran.
"""

from __future__ import annotations

import gc
from pathlib import Path

import streamlit as st
from attention_lens.app import warmup
from attention_lens.app.render import page_style
from attention_lens.app.render.preload import DATAFRAME, ECHARTS, PLOTLY, preload

SCREENS = Path(__file__).resolve().parent / "screens"
# (script, title, url path, icon); the first is the default page, served at the root: its url path still names it
# (Streamlit hashes a page's url path into the page's id, and /explore opens it too).
PAGES = [("explore/page.py", "Explore", "explore", ":material/search:"),
         ("leakage_lab.py", "Leakage lab", "Leakage_lab", None), ("alignment.py", "Alignment", "Alignment", None),
         ("heads.py", "Heads", "Heads", None), ("compare.py", "Compare", "Compare", None)]

# The tab's icon is a file of ours, served by this server: a material-icon or emoji favicon makes the browser fetch
# it from fonts.gstatic.com or a CDN on every rerun (an error offline).
ICON = Path(__file__).resolve().parents[1] / "assets" / "favicon.png"
st.set_page_config(page_title="Attention Lens", page_icon=str(ICON), layout="wide")
page = st.navigation([st.Page(str(SCREENS / script), title=title, icon=icon, url_path=url, default=i == 0)
                      for i, (script, title, url, icon) in enumerate(PAGES)])
# Explore draws its charts with ECharts (app/screens/charts.py), Alignment as SVG (no chart code to preload), the
# other pages with plotly; Leakage lab also draws data grids (app/render/preload.py)
preload(*{"": [ECHARTS], "Alignment": [], "Leakage_lab": [PLOTLY, DATAFRAME]}.get(page.url_path, [PLOTLY]))
st.html(page_style.STYLE)  # every page's own style rules (app/render/page_style.py)
try:
    with warmup.script_run():  # the warm-up starts no piece while a page's script runs
        page.run()
finally:  # once per server, after its first page's script run: the first export, head switch-off and Leakage lab
    warmup.start()  # plot, paid in the background (app/warmup.py)
if not gc.get_freeze_count():  # once per process, after the first page run has imported torch, pandas, plotly:
    gc.collect()  # their ~250k objects leave the collector's reach, so the full collection Streamlit runs
    gc.freeze()   # after every script run (runner.postScriptGC) scans only what the sessions made since
