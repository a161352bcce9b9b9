"""Entry point: `streamlit run app/streamlit_app.py`.

The Explore page is the default. Any `app/more_pages/*.py` joins the navigation automatically, ordered by file
name, titled from it (`5_leakage_lab.py` -> "Leakage lab"); a page imports `common` for the shared model
picker, inputs and decoding cache. The folder is not called `pages/`: Streamlit builds its own automatic
menu from a folder of that name, which showed up on direct links before `st.navigation` ran.
"""

from __future__ import annotations

import gc
from pathlib import Path

import streamlit as st

APP = Path(__file__).resolve().parent


def page_title(path: Path) -> str:
    words = path.stem.split("_")
    if words[0].isdigit():
        words = words[1:]
    return " ".join(words).capitalize()


st.set_page_config(page_title="Attention Lens", page_icon=":material/search:", layout="wide")
pages = [st.Page(str(APP / "explore.py"), title="Explore", icon=":material/search:", default=True)]
pages += [st.Page(str(p), title=page_title(p), url_path=p.stem.lstrip("0123456789_") or p.stem)
          for p in sorted((APP / "more_pages").glob("*.py")) if not p.name.startswith("_")]
st.navigation(pages).run()
if not gc.get_freeze_count():  # once per process, after the first page run has imported torch, pandas, plotly:
    gc.collect()  # their ~250k objects leave the collector's reach, so the full collection Streamlit runs
    gc.freeze()   # after every script run (runner.postScriptGC) scans only what the sessions made since
