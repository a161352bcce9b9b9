"""The Alignment page's links and tables: how each link fares against the gold, and the head grid, method
ranking and scores as HTML (the two drawings are SVG: app/render/alignment_svg.py). No Streamlit here
(docs/conventions.md, rule 7).

Links are (source word, target word), 0-based, as in Pharaoh files. Colours say how a link fares against
the gold: a predicted link that is a sure gold link is a hit (green, solid), one that is only a possible
gold link is a possible hit (green, dashed), one outside the gold is a false link (red); a sure gold link
the method missed is drawn grey and dashed, a missed possible link is not drawn (missing it costs nothing).
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence

import numpy as np
import pandas as pd
from attention_lens.app.render import figures

Link = tuple[int, int]
HIT, POSSIBLE_HIT, FALSE, MISSED = "#2b8a3e", "#2b8a3e", "#c92a2a", "#868e96"
STYLES = {  # kind -> (colour, dash, legend label)
    "hit": (HIT, "solid", "predicted · sure gold (hit)"),
    "possible": (POSSIBLE_HIT, "dash", "predicted · possible gold"),
    "false": (FALSE, "solid", "predicted · not in gold"),
    "predicted": ("#1c7ed6", "solid", "predicted (no gold)"),
    "missed": (MISSED, "dot", "sure gold link missed"),
}


def classify(predicted: Collection[Link], sure: Collection[Link] | None,
             possible: Collection[Link] | None) -> dict[str, list[Link]]:
    """Split links into hit / possible / false / missed (or just `predicted` when there is no gold)."""
    predicted = set(predicted)
    if sure is None:
        return {"predicted": sorted(predicted)}
    sure, possible = set(sure), set(possible or ()) | set(sure)
    return {"hit": sorted(predicted & sure), "possible": sorted((predicted & possible) - sure),
            "false": sorted(predicted - possible), "missed": sorted(sure - predicted)}


def check_links(source_words: Sequence[str], target_words: Sequence[str], links: Collection[Link]) -> None:
    bad = [(i, j) for i, j in links if not (0 <= i < len(source_words) and 0 <= j < len(target_words))]
    if bad:
        raise ValueError(f"link {bad[0][0]}-{bad[0][1]} is outside {len(source_words)} source and "
                         f"{len(target_words)} target words")


def _aer_colour(aer: float) -> tuple[str, str]:
    """Background and text colour of an AER cell: the heatmaps' colour scale reversed (low AER, good: dark)."""
    return figures.colour_at(1 - aer), "#ffffff" if aer < 0.45 else "#1f2933"


AER_CSS = """
.lens-aer{border-collapse:separate;border-spacing:3px;font-variant-numeric:tabular-nums;margin:.3em 0}
.lens-aer th{font-weight:500;color:#52606d;font-size:.85em;padding:0 .5em;text-align:center}
.lens-aer th.row{text-align:right}
.lens-aer td{min-width:3.4em;height:2.2em;text-align:center;border-radius:.2em;font-size:.9em}
.lens-aer td.none{background:#f5f7fa;color:#9aa5b1}
.lens-aer caption{caption-side:top;text-align:left;font-weight:600;padding-bottom:.3em}
"""


def head_aer_html(aer: np.ndarray, title: str = "") -> str:
    """(layers, heads) AER as an HTML table of coloured cells, low (good) dark; layers and heads 1-based; a
    head with no score (NaN) is a grey dash. A table, not a chart: twelve numbers need no plotting library,
    and the page draws it with its text (app/render/bars.py says why that matters for page loads)."""
    aer = np.asarray(aer, dtype=float)
    if aer.ndim != 2:
        raise ValueError(f"AER per head needs (layers, heads), got shape {aer.shape}")
    layers, heads = aer.shape
    out = [f"<style>{AER_CSS}</style><table class='lens-aer'>"]
    if title:
        out.append(f"<caption>{figures.escape(title)}</caption>")
    out.append("<tr><th></th>" + "".join(f"<th>head {h + 1}</th>" for h in range(heads)) + "</tr>")
    for li in range(layers):
        cells = []
        for hi in range(heads):
            v = aer[li, hi]
            where = f"layer {li + 1} · head {hi + 1}"
            if np.isnan(v):
                cells.append(f"<td class='none' title='{where}: not scored'>–</td>")
            else:
                bg, fg = _aer_colour(float(v))
                cells.append(f"<td style='background:{bg};color:{fg}' title='{where}: AER {v:.3f}'>{v:.2f}</td>")
        out.append(f"<tr><th class='row'>layer {li + 1}</th>{''.join(cells)}</tr>")
    out.append("</table>")
    return "".join(out)


SCORES_CSS = """
.lens-scores{display:flex;gap:2.5rem;margin:.2rem 0 .4rem}
.lens-scores div{display:flex;flex-direction:column}
.lens-scores span{font-size:.875rem;color:#52606d}
.lens-scores b{font-size:2rem;font-weight:400;line-height:1.25}
"""


def scores_html(scores: Sequence[tuple[str, str, str]]) -> str:
    """Named figures shown large, side by side, each with its explanation as a tooltip: (label, value, help).
    What `st.metric` shows, as plain HTML: the page then loads no metric code, so a first visit downloads less
    before the page shows."""
    cells = "".join(f"<div title='{html.escape(tip)}'><span>{html.escape(label)}</span>"
                    f"<b>{html.escape(value)}</b></div>" for label, value, tip in scores)
    return f"<style>{SCORES_CSS}</style><div class='lens-scores'>{cells}</div>"


RANK_CSS = """
.lens-rank-box{overflow:auto;border:1px solid rgba(49,51,63,.1);border-radius:.5rem}
.lens-rank{border-collapse:collapse;width:100%;font-size:.875rem;font-variant-numeric:tabular-nums}
.lens-rank th,.lens-rank td{padding:.25rem .6rem;border-bottom:1px solid rgba(49,51,63,.1);text-align:left}
.lens-rank thead th{position:sticky;top:0;background:#fff;color:#52606d;font-weight:500}
"""


def ranking_html(table: pd.DataFrame, height_px: int = 360, digits: int = 3) -> str:
    """A table of methods and their scores as static HTML (pandas' `to_html`, text escaped) in a box that
    scrolls past `height_px`; float columns right-aligned with `digits` decimals. Not `st.table` or
    `st.dataframe`: those send Arrow data, and the browser loads ~0.9 MB of Arrow code to show it, which a first
    visit waits for."""
    numeric = [k for k, c in enumerate(table.columns) if pd.api.types.is_float_dtype(table[c])]
    body = table.to_html(index=False, border=0, classes="lens-rank", escape=True, na_rep="–",
                         formatters={table.columns[k]: (lambda v: f"{v:.{digits}f}") for k in numeric})
    right = ",".join(f".lens-rank td:nth-child({k + 1}),.lens-rank th:nth-child({k + 1})" for k in numeric)
    return (f"<style>{RANK_CSS}{right + '{text-align:right}' if right else ''}</style>"
            f"<div class='lens-rank-box' style='max-height:{int(height_px)}px'>{body}</div>")
