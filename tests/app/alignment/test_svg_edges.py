"""The links drawing keeps every word inside its canvas: on a long sentence, where the words are written at an
angle, the first target word ("Therefore") ran past the left edge and showed as "erefore"."""

from __future__ import annotations

import math
import re

from attention_lens.app.render.alignment_svg import _text_px, links_svg

SENTENCES = ("Therefore the committee recommends that the house adopt the amended bill without further delay",
             "Therefore le comité recommande que la chambre adopte le projet de loi modifié sans autre délai")
SOURCE, TARGET = (sentence.split(" ") for sentence in SENTENCES)


def test_tilted_words_stay_inside_the_drawing():
    svg = links_svg(SOURCE, TARGET, {(0, 0), (1, 1), (2, 2)})
    width = float(re.search(r'<svg[^>]*width="([\d.]+)', svg).group(1))
    drawn = re.findall(r'<text x="([\d.]+)" y="[\d.]+" font-size="14" fill="[^"]+" text-anchor="(start|end)" '
                       r'transform="rotate\(-45[^"]*"\>([^<]+)</text>', svg)
    assert len(drawn) == len(SOURCE) + len(TARGET)  # every word written at an angle
    reach = math.cos(math.pi / 4)
    for x, anchor, word in drawn:
        extent = _text_px(word, 14) * reach
        left, right = (float(x) - extent, float(x)) if anchor == "end" else (float(x), float(x) + extent)
        assert left >= 0 and right <= width, (word, left, right, width)
