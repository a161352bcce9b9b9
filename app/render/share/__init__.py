"""Copy link's box (share_link.js, share_link.css): the page's link as the browser's address bar holds it, with a
Copy button. No Streamlit here; app/screens/page_url.py mounts it."""

from __future__ import annotations

from pathlib import Path

HERE = Path(__file__).resolve().parent


def asset(name: str) -> str:
    """share_link.js / share_link.css, as text (the component takes them inline)."""
    return (HERE / name).read_text(encoding="utf-8")
