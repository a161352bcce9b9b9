"""The Alignment page's two drawings as SVG markup: the links between the two sentences, and the word-level
attention under them. No Streamlit here (docs/conventions.md, rule 7); app/screens/charts.py puts the markup on
the page.

Why SVG written here and not a chart library: a new visitor's browser loads a chart library's code before it
draws anything, and ECharts' chunk (1.2 MB, with ~0.9 MB of Arrow code it imports) was the largest part of
the Alignment page's load (2.38 -> 1.90 s without it, benchmarks/RESULTS.md part 11). Two small figures of
words, lines and coloured cells need none of it. Every mark keeps a tooltip (`<title>`: the words, the
weight, how the link fares against the gold), and each drawing says what it shows (role="img", aria-label).

Colours and kinds are those of app/render/alignment.py (hit, possible, false, predicted, missed); text is
escaped, so a typed `<b>` or `&` shows as typed.
"""

from __future__ import annotations

import html
from collections.abc import Collection, Sequence

import numpy as np
from attention_lens.app.render import figures
from attention_lens.app.render.alignment import STYLES, Link, check_links, classify

FONT = "Inter, 'DejaVu Sans', Arial, sans-serif"
INK, MUTED, GOLD, BLANK = "#1f2933", "#52606d", "#e8590c", "#f5f7fa"
DASH = {"solid": None, "dash": "7 5", "dot": "2 4"}
CHAR_PX = 0.56  # width of a character, in font sizes (an estimate: the server cannot measure text)
# Above this many cells the word-level attention is one image (a pixel a cell, scaled up), not a rectangle with a
# tooltip per cell: a 400 x 400-word paste would be 160,000 rectangles, ~22 MB of markup and ~5 s to write.
IMAGE_CELLS = 20_000


def _e(text: str) -> str:
    return html.escape(str(text), quote=True)


def _text_px(text: str, size: float) -> float:
    return len(text) * size * CHAR_PX


def _svg(width: float, height: float, label: str, body: list[str]) -> str:
    """The outer element: drawn at its own pixel size, shrunk (never stretched) to a narrower column, on white
    (as the charts are: its dark text stays readable under a dark theme)."""
    w, h = int(round(width)), int(round(height))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {w} {h}" width="{w}" height="{h}" '
            f'style="max-width:100%;height:auto;background:#ffffff;font-family:{_e(FONT)}" role="img" '
            f'aria-label="{_e(label)}">'
            + "".join(body) + "</svg>")


def _title(text: str) -> str:
    return (f'<text x="8" y="20" font-size="15" fill="{INK}">{_e(text)}</text>' if text else "")


def _legend(items: list[tuple[str, str]], x: float, y: float) -> tuple[str, float]:
    """A row of (swatch markup at 0,0 .. 22,0, label) from x at baseline y: (markup, width used)."""
    out, at = [], x
    for swatch, label in items:
        out.append(f'<g transform="translate({at:.1f},{y - 4:.1f})">{swatch}</g>'
                   f'<text x="{at + 28:.1f}" y="{y:.1f}" font-size="12" fill="{INK}">{_e(label)}</text>')
        at += 28 + _text_px(label, 12) + 16
    return "".join(out), at - x


def _line_swatch(colour: str, dash: str) -> str:
    d = DASH[dash]
    return (f'<line x1="0" y1="0" x2="22" y2="0" stroke="{colour}" stroke-width="2.5"'
            + (f' stroke-dasharray="{d}"' if d else "") + "/>")


def links_svg(source_words: Sequence[str], target_words: Sequence[str], predicted: Collection[Link],
              sure: Collection[Link] | None = None, possible: Collection[Link] | None = None,
              weights: np.ndarray | None = None, title: str = "") -> str:
    """Source words on the top row, target words on the bottom row, a line per link. weights (m, n) [target,
    source], if given, set each predicted line's width and go in its tooltip."""
    groups = classify(predicted, sure, possible)
    check_links(source_words, target_words, [link for g in groups.values() for link in g])
    n, m = len(source_words), len(target_words)
    slots = max(n, m, 1)
    longest = max((_text_px(w, 14) for w in [*source_words, *target_words]), default=0)
    # a slot per word of the longer sentence, as wide as its longest word, within the width the page's figures
    # are laid out for (a wider drawing would be shrunk to the column, its text with it)
    slot = max(56.0, min(120.0, longest + 16, (figures.WIDTH - 20) / slots))
    tilt = longest + 8 > slot  # words wider than their slot: written at an angle so that they do not overlap
    width = max(560.0, slots * slot + 20)
    slot = (width - 20) / slots  # the words spread over the whole drawing
    word_room = 22 + (min(longest, 160) * 0.71 if tilt else 0)
    top = (34 if title else 8) + word_room
    y_src, y_tgt = top, top + 110
    height = y_tgt + word_room + 34
    # At an angle, a target word runs left of its dot and a source word right of it, by 0.71 of its length: the
    # first target words and the last source words get room at the edges ("Therefore" showed as "erefore").
    left = right = 10.0
    if tilt:
        def step(count: int) -> float:  # the distance between two neighbouring dots of a row of count words
            return (slots - 1) * slot / max(count - 1, 1)

        left = max(10.0, *(_text_px(w, 14) * 0.71 + 4 - slot / 2 - k * step(m) for k, w in enumerate(target_words)))
        right = max(10.0, *(_text_px(w, 14) * 0.71 + 4 - slot / 2 - (n - 1 - k) * step(n)
                            for k, w in enumerate(source_words)))
        width += left + right - 20

    def xs(count: int) -> list[float]:
        span = (slots - 1) * slot
        if count == 1:
            return [left + slot / 2 + span / 2]
        return [left + slot / 2 + k * span / (count - 1) for k in range(count)]

    x_src, x_tgt = xs(n), xs(m)
    body = [_title(title)]
    for kind, links in groups.items():
        colour, dash, label = STYLES[kind]
        d = DASH[dash]
        for i, j in links:
            w = float(weights[j, i]) if weights is not None else None
            stroke = 1.5 if kind == "missed" or w is None else 1.5 + 4.5 * min(max(w, 0.0), 1.0)
            tip = f"{source_words[i]} ↔ {target_words[j]}\n{label}" + (f"\nweight {w:.3f}" if w is not None else "")
            coords = f'x1="{x_src[i]:.1f}" y1="{y_src:.1f}" x2="{x_tgt[j]:.1f}" y2="{y_tgt:.1f}"'
            body.append(f'<g class="link {kind}"><title>{_e(tip)}</title>'
                        f'<line {coords} stroke="{colour}" stroke-width="{stroke:.2f}"'
                        + (f' stroke-dasharray="{d}"' if d else "") + "/>"
                        f'<line {coords} stroke="transparent" stroke-width="12"/></g>')
    for y, xpos, words, side, dy in ((y_src, x_src, source_words, "source", -10),
                                     (y_tgt, x_tgt, target_words, "target", 20)):
        for k, (x, word) in enumerate(zip(xpos, words)):
            if tilt:
                anchor = "start" if side == "source" else "end"
                text = (f'<text x="{x:.1f}" y="{y + dy:.1f}" font-size="14" fill="{INK}" text-anchor="{anchor}" '
                        f'transform="rotate(-45 {x:.1f} {y + dy:.1f})">{_e(word)}</text>')
            else:
                text = (f'<text x="{x:.1f}" y="{y + dy:.1f}" font-size="14" fill="{INK}" '
                        f'text-anchor="middle">{_e(word)}</text>')
            body.append(f'<g class="word {side}"><title>{_e(f"{side} word {k}: {word}")}</title>'
                        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="4.5" fill="{INK}"/>{text}</g>')
    kinds = [kind for kind, links in groups.items() if links]
    legend, legend_w = _legend([(_line_swatch(STYLES[k][0], STYLES[k][1]), STYLES[k][2]) for k in kinds], 10,
                               height - 12)
    body.append(legend)
    width = max(width, legend_w + 20)
    said = (f"{title or 'Links'}: source words: {' '.join(source_words)}; target words: {' '.join(target_words)}; "
            f"{sum(len(links) for kind, links in groups.items() if kind != 'missed')} links drawn"
            + (f", {len(groups['missed'])} sure gold links missed" if groups.get("missed") else "") + ".")
    return _svg(width, height, said, body)


def _gradient(ident: str) -> str:
    stops = "".join(f'<stop offset="{1 - s:.2f}" stop-color="{c}"/>' for s, c in reversed(figures.COLORSCALE))
    return f'<defs><linearGradient id="{ident}" x1="0" y1="0" x2="0" y2="1">{stops}</linearGradient></defs>'


def matrix_svg(weights: np.ndarray, source_words: Sequence[str], target_words: Sequence[str],
               predicted: Collection[Link], sure: Collection[Link] | None = None,
               possible: Collection[Link] | None = None, title: str = "") -> str:
    """The word-level attention (m, n) [target, source] as coloured cells (white 0 to dark blue 1), predicted
    links as dots coloured like the link drawing, sure gold links as open squares, possible ones as open
    diamonds; each cell's tooltip gives both words and the weight."""
    weights = np.asarray(weights, dtype=float)
    m, n = len(target_words), len(source_words)
    if weights.shape != (m, n):
        raise ValueError(f"weights are {weights.shape} but there are {m} target and {n} source words")
    groups = classify(predicted, sure, possible)
    check_links(source_words, target_words, [link for g in groups.values() for link in g])
    rows = [f"{j} {w}" for j, w in enumerate(target_words)]
    cols = [f"{i} {w}" for i, w in enumerate(source_words)]
    cell = max(14.0, min(40.0, (figures.WIDTH - 250) / max(n, 1)))
    font = 12 if cell >= 20 else 10
    left = 34 + min(220.0, max((_text_px(r, font) for r in rows), default=0)) + 8
    col_room = min(200.0, max((_text_px(c, font) for c in cols), default=0)) * 0.71 + 14
    kinds = [k for k in ("hit", "possible", "false", "predicted") if groups.get(k)]
    golds = ([("sure gold", sorted(set(sure)))] if sure else []) + (
        [("possible gold", sorted(set(possible or ()) - set(sure or ())))] if possible is not None else [])
    golds = [(label, links) for label, links in golds if links]
    items = [(f'<circle cx="11" cy="0" r="5" fill="{STYLES[k][0]}"/>', STYLES[k][2]) for k in kinds]
    items += [(f'<rect x="5" y="-6" width="12" height="12" fill="none" stroke="{GOLD}" stroke-width="2"/>'
               if label == "sure gold" else
               f'<polygon points="11,-7 18,0 11,7 4,0" fill="none" stroke="{GOLD}" stroke-width="2"/>', label)
              for label, _ in golds]
    top = (34 if title else 8) + (30 if items else 0) + 14
    legend, legend_w = _legend(items, 10, top - 26) if items else ("", 0.0)
    x0, y0 = left, top
    grid_w, grid_h = cell * n, cell * m
    width = max(x0 + grid_w + 90, 420.0, legend_w + 20)
    height = y0 + grid_h + col_room + 30
    ident = "lens-scale"
    body = [_gradient(ident), _title(title)]
    finite = np.isfinite(weights)  # a model can write inf or NaN: a blank cell that says so, not a colour
    if m * n > IMAGE_CELLS:
        uri = figures.png_uri(np.where(finite, weights, 0.0), finite, 1.0)  # non-finite cells grey
        body.append(f'<image class="cells" x="{x0:.1f}" y="{y0:.1f}" width="{grid_w:.1f}" height="{grid_h:.1f}" '
                    f'preserveAspectRatio="none" style="image-rendering:pixelated" href="{uri}">'
                    f"<title>{m} x {n} cells, drawn as an image (above {IMAGE_CELLS:,} cells: no tooltip per "
                    "cell)</title></image>")
    else:
        fills = figures.colours_at(np.where(finite, weights, 0.0))
        cells = []
        for j in range(m):
            for i in range(n):
                v, ok = float(weights[j, i]), bool(finite[j, i])
                tip = (f"target {j} {target_words[j]} ← source {i} {source_words[i]}\n"
                       + (f"weight {v:.3f}" if ok else f"weight {v} (not a number)"))
                cells.append(f'<rect x="{x0 + i * cell:.1f}" y="{y0 + j * cell:.1f}" width="{cell - 1:.1f}" '
                             f'height="{cell - 1:.1f}" fill="{fills[j * n + i] if ok else BLANK}">'
                             f"<title>{_e(tip)}</title></rect>")
        body.append(f'<g class="cells">{"".join(cells)}</g>')

    def centre(i: int, j: int) -> tuple[float, float]:
        return x0 + i * cell + (cell - 1) / 2, y0 + j * cell + (cell - 1) / 2

    marks = []
    for label, links in golds:
        half = cell * 0.32
        for i, j in links:
            cx, cy = centre(i, j)
            shape = (f'<rect x="{cx - half:.1f}" y="{cy - half:.1f}" width="{2 * half:.1f}" height="{2 * half:.1f}"'
                     if label == "sure gold" else
                     f'<polygon points="{cx:.1f},{cy - half * 1.25:.1f} {cx + half * 1.25:.1f},{cy:.1f} '
                     f'{cx:.1f},{cy + half * 1.25:.1f} {cx - half * 1.25:.1f},{cy:.1f}"')
            marks.append(shape + f' fill="none" stroke="{GOLD}" stroke-width="2.5" pointer-events="none"/>')
    for kind in kinds:
        colour = STYLES[kind][0]
        for i, j in groups[kind]:
            cx, cy = centre(i, j)
            marks.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{max(3.0, cell * 0.14):.1f}" fill="{colour}" '
                         f'stroke="#ffffff" stroke-width="1.5" pointer-events="none"/>')
    body.append("".join(marks))
    for j, r in enumerate(rows):
        body.append(f'<text x="{x0 - 6:.1f}" y="{y0 + j * cell + cell / 2 + font * 0.35:.1f}" font-size="{font}" '
                    f'fill="{INK}" text-anchor="end">{_e(r)}</text>')
    for i, c in enumerate(cols):
        x, y = x0 + i * cell + cell / 2, y0 + grid_h + 8
        body.append(f'<text x="{x:.1f}" y="{y:.1f}" font-size="{font}" fill="{INK}" text-anchor="end" '
                    f'dominant-baseline="hanging" transform="rotate(-45 {x:.1f} {y:.1f})">{_e(c)}</text>')
    body.append(f'<text x="{x0 + grid_w / 2:.1f}" y="{height - 8:.1f}" font-size="12" fill="{MUTED}" '
                f'text-anchor="middle">source word</text>'
                f'<text x="14" y="{y0 + grid_h / 2:.1f}" font-size="12" fill="{MUTED}" text-anchor="middle" '
                f'transform="rotate(-90 14 {y0 + grid_h / 2:.1f})">target word</text>')
    bar_x, bar_h = x0 + grid_w + 24, max(60.0, min(160.0, grid_h))
    body.append(f'<text x="{bar_x - 4:.1f}" y="{y0 - 6:.1f}" font-size="11" fill="{MUTED}">weight</text>'
                f'<rect x="{bar_x:.1f}" y="{y0:.1f}" width="12" height="{bar_h:.1f}" fill="url(#{ident})" '
                f'stroke="#d5d5d5"/>'
                f'<text x="{bar_x + 18:.1f}" y="{y0 + 9:.1f}" font-size="11" fill="{MUTED}">1</text>'
                f'<text x="{bar_x + 18:.1f}" y="{y0 + bar_h:.1f}" font-size="11" fill="{MUTED}">0</text>')
    if legend:
        body.append(legend)
    said = (f"{title or 'Word-level attention'}: {m} target words by {n} source words; "
            f"{sum(len(groups[k]) for k in kinds)} predicted links marked"
            + (f", {len(golds[0][1])} sure gold links outlined" if golds and golds[0][0] == "sure gold" else "") + ".")
    return _svg(width, height, said, body)
