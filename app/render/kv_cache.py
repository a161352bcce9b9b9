"""The key-value cache at one decoding step, drawn as SVG written here (no chart library), and its work counts
as an HTML table. Pure: tokens and numbers in, markup out, no Streamlit (docs/conventions.md, rule 7); every token is
escaped, so typed text stays text.
"""

from __future__ import annotations

import html
from collections.abc import Mapping, Sequence

REUSED, NEW, CROSS, CROSS_NEW = "#adb5bd", "#d9480f", "#74a9cf", "#1c7ed6"
WIDTH = 1100
LABEL_W, ROW_H, GAP = 150, 26, 6


def _cells(y: float, x0: float, cell: float, tokens: Sequence[str], colours: Sequence[str], tips: Sequence[str]) -> str:
    out = []
    for i, (tok, colour, tip) in enumerate(zip(tokens, colours, tips)):
        x = x0 + i * cell
        out.append(f'<rect x="{x:.1f}" y="{y}" width="{cell - 2:.1f}" height="{ROW_H - 4}" rx="3" fill="{colour}">'
                   f'<title>{html.escape(tip)}</title></rect>')
        if cell >= 22:
            size = 11 if cell >= 40 else 9
            fits = int((cell - 4) / (size * 0.55))  # characters of this font size that fit in the cell
            text = tok if len(tok) <= fits else tok[: max(1, fits - 1)] + "…"
            out.append(f'<text x="{x + (cell - 2) / 2:.1f}" y="{y + ROW_H / 2 + 2}" font-size="{size}" fill="#fff" '
                       f'text-anchor="middle" pointer-events="none">{html.escape(text)}</text>')
    return "".join(out)


def cache_svg(decoder_tokens: Sequence[str], source_tokens: Sequence[str], step: int, layers: int) -> str:
    """The caches after 0-based step `step`: per decoder layer, a row of self-attention keys/values (the
    decoder tokens 0..step, the last one new) and a row of cross-attention keys/values (the n source tokens,
    new at step 0, reused after)."""
    if not 0 <= step < len(decoder_tokens):
        raise ValueError(f"step must be in 0..{len(decoder_tokens) - 1}, got {step}")
    shown = list(decoder_tokens[: step + 1])
    cols = max(len(shown), len(source_tokens), 1)
    cell = min(48.0, (WIDTH - LABEL_W - 20) / cols)
    height = layers * (2 * ROW_H + GAP * 3) + 40
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="Inter, DejaVu Sans, Arial, sans-serif" '
             f'style="background:#ffffff">']
    y = 8
    legend = [(REUSED, "reused from the cache"), (NEW, "computed at this step"),
              (CROSS, "cross K/V: computed once at step 1, reused"), (CROSS_NEW, "cross K/V computed now (step 1)")]
    x = 4
    for colour, label in legend:
        parts.append(f'<rect x="{x}" y="{y}" width="12" height="12" rx="2" fill="{colour}"/>'
                     f'<text x="{x + 16}" y="{y + 10}" font-size="12" fill="#1f2933">{html.escape(label)}</text>')
        x += 24 + 7 * len(label)
    y += 26
    self_colours = [REUSED] * step + [NEW]
    self_tips = [f"position {i + 1} '{tok}': key and value {'computed now' if i == step else 'reused'}"
                 for i, tok in enumerate(shown)]
    cross_colour = CROSS_NEW if step == 0 else CROSS
    cross_tips = [f"source '{tok}': key and value {'computed now' if step == 0 else 'reused since step 1'}"
                  for tok in source_tokens]
    for layer in range(layers):
        parts.append(f'<text x="4" y="{y + ROW_H / 2 + 4}" font-size="12" fill="#1f2933">layer {layer + 1} · '
                     f'self ({step + 1})</text>')
        parts.append(_cells(y, LABEL_W, cell, shown, self_colours, self_tips))
        y += ROW_H + GAP
        parts.append(f'<text x="4" y="{y + ROW_H / 2 + 4}" font-size="12" fill="#1f2933">layer {layer + 1} · '
                     f'cross ({len(source_tokens)})</text>')
        parts.append(_cells(y, LABEL_W, cell, list(source_tokens), [cross_colour] * len(source_tokens), cross_tips))
        y += ROW_H + 2 * GAP
    parts.append("</svg>")
    return "".join(parts)


PART_NAMES = {"self_attention": "self-attention", "cross_attention": "cross-attention",
              "cross_kv": "cross-attention keys/values of the source", "feed_forward": "feed-forward",
              "logits": "next-token logits"}


def _num(x: float) -> str:
    for unit, size in (("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(x) >= size:
            return f"{x / size:.2f} {unit}"
    return f"{x:.0f}"


def counts_table(cached: Mapping[str, int], recompute: Mapping[str, int], whole_cached: int, whole_recompute: int,
                 steps: int) -> str:
    """This step's multiply-adds per part, with and without the cache, and the whole generation's totals."""
    if set(cached) != set(recompute):
        raise ValueError("both counts must name the same parts")
    rows = [f"<tr><td>{html.escape(PART_NAMES.get(k, k))}</td><td>{_num(cached[k])}</td>"
            f"<td>{_num(recompute[k])}</td></tr>" for k in cached]
    total_c, total_r = sum(cached.values()), sum(recompute.values())
    rows.append(f"<tr class='sum'><td>this step</td><td>{_num(total_c)}</td><td>{_num(total_r)} "
                f"({total_r / max(total_c, 1):.1f}×)</td></tr>")
    rows.append(f"<tr class='sum'><td>whole generation ({steps} steps)</td><td>{_num(whole_cached)}</td>"
                f"<td>{_num(whole_recompute)} ({whole_recompute / max(whole_cached, 1):.1f}×)</td></tr>")
    return ("<style>.kv td,.kv th{padding:2px 10px;text-align:right;font-size:14px}.kv td:first-child,"
            ".kv th:first-child{text-align:left}.kv tr.sum td{font-weight:600;border-top:1px solid #ced4da}</style>"
            "<table class='kv'><tr><th>multiply-adds</th><th>with the cache</th><th>recomputing</th></tr>"
            + "".join(rows) + "</table>")
