"""Small SVG plots of an alignment's error breakdown (model.analysis.alignment.breakdown): precision and recall
per band of one grouping, and each head's attention sinks. Pure markup from the JSON-like summary; no st. calls."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

PRECISION, RECALL = "#1f77b4", "#ff7f0e"
TITLES = {"frequency": "By source-word frequency", "token_class": "By token class",
          "length": "By sentence length (source words)", "distance": "By reordering distance (words off diagonal)"}


def bars_svg(rows: Sequence[dict], title: str, width: int = 330) -> str:
    """Two horizontal bars per band, precision and recall (0 to 1), the band's sure-link count beside it."""
    label_w, bar_h, gap, top = 96, 9, 8, 40
    plot_w = width - label_w - 60
    height = top + len(rows) * (2 * bar_h + gap) + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="11" role="img"><title>{escape(title)}</title>',
           f'<text x="4" y="14" font-size="12" font-weight="bold">{escape(title)}</text>',
           f'<rect x="{label_w}" y="22" width="10" height="8" fill="{PRECISION}"/>'
           f'<text x="{label_w + 14}" y="30">precision</text>'
           f'<rect x="{label_w + 80}" y="22" width="10" height="8" fill="{RECALL}"/>'
           f'<text x="{label_w + 94}" y="30">recall</text>']
    for k, row in enumerate(rows):
        y = top + k * (2 * bar_h + gap)
        out.append(f'<text x="{label_w - 4}" y="{y + bar_h + 3}" text-anchor="end">{escape(str(row["band"]))}</text>')
        for j, (key, colour) in enumerate((("precision", PRECISION), ("recall", RECALL))):
            value = row.get(key)
            yy = y + j * bar_h
            if value is None:
                out.append(f'<text x="{label_w + 2}" y="{yy + bar_h - 1}" fill="#888">–</text>')
                continue
            out.append(f'<rect x="{label_w}" y="{yy}" width="{plot_w * value:.1f}" height="{bar_h - 1}" '
                       f'fill="{colour}"><title>{escape(str(row["band"]))}: {key} {value:.3f}</title></rect>')
            out.append(f'<text x="{label_w + plot_w * value + 3:.1f}" y="{yy + bar_h - 1}" font-size="9">'
                       f'{value:.2f}</text>')
        out.append(f'<text x="{width - 4}" y="{y + bar_h + 3}" text-anchor="end" fill="#666" font-size="9">'
                   f'{row.get("sure", 0)} sure</text>')
    out.append("</svg>")
    return "".join(out)


def sinks_svg(sinks: dict, title: str = "Attention sinks per head") -> str:
    """A layers x heads grid: each cell's share of the head's cross-attention on special pieces (</s>) and on
    punctuation, written as two percentages, the cell shaded by their sum."""
    heads = sinks.get("heads", [])
    if not heads:
        return ""
    layers = max(h["layer"] for h in heads)
    per = max(h["head"] for h in heads)
    cell_w, cell_h, left, top = 74, 30, 30, 40
    width, height = left + per * cell_w + 10, top + layers * cell_h + 22
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" '
           f'font-size="10" role="img"><title>{escape(title)}</title>',
           f'<text x="4" y="14" font-size="12" font-weight="bold">{escape(title)}</text>',
           '<text x="4" y="30" fill="#555">each cell: share on &lt;/s&gt; · on punctuation</text>']
    for hi in range(per):
        out.append(f'<text x="{left + hi * cell_w + cell_w / 2}" y="{top - 2}" text-anchor="middle">H{hi + 1}</text>')
    for h in heads:
        x, y = left + (h["head"] - 1) * cell_w, top + (h["layer"] - 1) * cell_h
        total = min(1.0, h["special"] + h["punctuation"])
        shade = int(255 - 150 * total)
        out.append(f'<rect x="{x}" y="{y}" width="{cell_w - 2}" height="{cell_h - 2}" fill="rgb(255,{shade},{shade})"'
                   f' stroke="#ccc"><title>layer {h["layer"]} head {h["head"]}: {h["special"]:.1%} on special '
                   f'pieces, {h["punctuation"]:.1%} on punctuation</title></rect>')
        out.append(f'<text x="{x + cell_w / 2 - 1}" y="{y + cell_h / 2 + 3}" text-anchor="middle">'
                   f'{h["special"]:.0%} · {h["punctuation"]:.0%}</text>')
    for li in range(layers):
        out.append(f'<text x="4" y="{top + li * cell_h + cell_h / 2 + 3}">L{li + 1}</text>')
    out.append("</svg>")
    return "".join(out)
