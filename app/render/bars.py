"""The next-token bars' style, HTML not a chart (the stepper draws them in the page at every step,
app/render/stepper), and `share`, a probability as the pages write it. No Streamlit here.

Ten labelled bars need no plotting library: a CSS grid of token, bar and probability draws with the page's text.
As a plotly chart it was the page's second chart, laid out and drawn before the page settled."""

from __future__ import annotations

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
