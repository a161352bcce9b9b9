"""Style rules for every page, which the entry point (app/streamlit_app.py) puts on each script run.

A cached function's spinner (`show_spinner="…"` on `st.cache_data` / `st.cache_resource`) is drawn over the page,
not in its flow: Streamlit gives its element no height and a box only as wide as its text, on a white background
that fades out at the bottom. What the previous script run drew at that place stays on screen until this run
replaces it, so a line wider than the spinner's text showed on right after it ("Switching every head off in
turn…200 pairs of the test split…", the Heads page at 1366 x 768). The rule widens the spinner's box to the whole
row: its background then hides the stale line beside the text.
"""

from __future__ import annotations

CACHE_SPINNER_CSS = ("[data-testid=stElementContainer]:has(> .stCacheSpinner), .stCacheSpinner "
                     "{width: 100%; max-width: 100%;}")
# only style tags: st.html sends it to the page's event container, where it takes no room in the layout
STYLE = f"<style>{CACHE_SPINNER_CSS}</style>"
