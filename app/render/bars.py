"""The next-token distribution at one step as HTML bars, not a chart. No Streamlit here.

Explore shows it beside the attention picture on every page load and every step. As a plotly chart it was the
page's second chart: the browser laid it out and drew it before the page settled, and the server built and sent
its figure on every click. Ten labelled bars need no plotting library: a CSS grid of token, bar and
probability draws with the page's text, and a step sends a few hundred bytes of HTML.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence

from attention_lens.app.render.figures import ACCENT  # the chosen token, as in the attention figures

BAR = "#89bedc"
CSS = f"""
.lens-topk{{display:grid;grid-template-columns:minmax(3em,max-content) 1fr 3.6em;gap:.22em .45em;align-items:center;
  font-size:.9em;margin:.2em 0 .4em 0}}
.lens-topk-title{{grid-column:1/-1;font-weight:600;margin-bottom:.15em}}
.lens-topk .tok{{font-family:'DejaVu Sans Mono',Menlo,monospace;white-space:nowrap;overflow:hidden;
  text-overflow:ellipsis;max-width:9em}}
.lens-topk .bar{{height:1.05em;background:#eef2f6;border-radius:.2em;overflow:hidden}}
.lens-topk .bar span{{display:block;height:100%;background:{BAR}}}
.lens-topk .bar span.chosen{{background:{ACCENT}}}
.lens-topk .p{{text-align:right;font-variant-numeric:tabular-nums;color:#52606d}}
.lens-topk .ref{{outline:2px solid #1f2933;outline-offset:1px}}
"""


def share(p: float) -> str:
    """A probability as a percentage (HTML); one too small to show at 0.1 % says so instead of reading 0.0 %."""
    return "&lt;0.1%" if 0 < p < 0.0005 else f"{p:.1%}"  # HTML: a bare "<" would start a tag


def topk_html(top_k: Sequence[tuple[str, float]], chosen: str | None = None, reference: str | None = None,
              title: str = "", escape: Callable[[str], str] = html.escape) -> str:
    """One row per candidate, most likely first: the token, a bar as wide as its probability, the probability.
    The chosen token's bar is in the accent colour; the reference token (teacher forcing) is outlined.
    Tokens go through `escape` (the page passes its own, which also neutralises Markdown); in attributes,
    quotes too."""
    def attr(s: str) -> str:
        return escape(s).replace("'", "&#39;").replace('"', "&#34;")

    out = [f"<div class='lens-topk' role='table' aria-label='{attr(title or 'Next token')}'>"]
    if title:
        out.append(f"<div class='lens-topk-title'>{escape(title)}</div>")
    for tok, p in top_k:
        width = min(max(float(p), 0.0), 1.0) * 100
        mark = "chosen" if tok == chosen else ""
        ref = " ref" if reference is not None and tok == reference else ""
        hover = attr(f"{tok}: p = {p:.4f}" + (" (chosen)" if mark else "") + (" (reference)" if ref else ""))
        out.append(f"<span class='tok{ref}' title='{hover}'>{escape(tok)}</span>"
                   f"<span class='bar' title='{hover}'><span class='{mark}' style='width:{width:.1f}%'>"
                   f"</span></span><span class='p'>{share(p)}</span>")
    out.append("</div>")
    return "".join(out)
