"""The Alignment page's drawings as SVG (app/render/alignment_svg.py): every word, link, cell and mark kept,
styled by how it fares against the gold, text escaped, the markup well-formed."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import numpy as np
import pytest
from attention_lens.app.render import alignment_svg as svg
from attention_lens.app.render import figures

from tests.fixtures.drawings import NS, texts, tooltips

SRC, TGT = ["the", "<cat>", "sat"], ["le", "chat"]
W = np.array([[0.9, 0.1, 0.0], [0.2, 0.7, 0.1]])


def groups(el: ET.Element, prefix: str) -> list[ET.Element]:
    return [g for g in el.iter(f"{NS}g") if (g.get("class") or "").startswith(prefix)]


def test_links_keep_every_word_and_link_styled_by_its_kind():
    out = svg.links_svg(SRC, TGT, {(0, 0), (1, 1)}, sure={(0, 0), (2, 1)}, possible={(0, 0), (2, 1)}, weights=W,
                        title="L <1>")
    el = ET.fromstring(out)  # well-formed: the page inserts it as it is
    assert texts(el)[0] == "L <1>" and "L &lt;1&gt;" in out and "<1>" not in out
    words = {side: [texts(g)[0] for g in groups(el, f"word {side}")] for side in ("source", "target")}
    assert words == {"source": ["the", "<cat>", "sat"], "target": ["le", "chat"]}  # shown as typed
    links = {g.get("class"): g for g in groups(el, "link ")}
    assert set(links) == {"link hit", "link false", "link missed"}  # (0,0) found, (1,1) not gold, (2,1) missed
    hit = links["link hit"].find(f"{NS}line")
    assert float(hit.get("stroke-width")) == pytest.approx(1.5 + 4.5 * 0.9) and hit.get("stroke-dasharray") is None
    assert links["link missed"].find(f"{NS}line").get("stroke-dasharray") == svg.DASH["dot"]
    assert "the ↔ le\npredicted · sure gold (hit)\nweight 0.900" in tooltips(el)
    assert {"predicted · sure gold (hit)", "predicted · not in gold", "sure gold link missed"} <= set(texts(el))
    assert "2 links drawn, 1 sure gold links missed" in el.get("aria-label")


def test_links_without_gold_are_one_kind_and_long_words_are_tilted():
    long = ["antidisestablishmentarianism", "floccinaucinihilipilification", "🐶", 'say "hi"']
    el = ET.fromstring(svg.links_svg(long, long[:2], {(0, 0), (1, 1), (3, 1)}))
    assert {g.get("class") for g in groups(el, "link ")} == {"link predicted"}
    assert [texts(g)[0] for g in groups(el, "word source")] == long
    assert all("rotate(-45" in t.get("transform", "") for t in el.iter(f"{NS}text") if t.text in long)
    short = ET.fromstring(svg.links_svg(["a", "b"], ["x"], {(0, 0)}))
    assert not any(t.get("transform") for t in short.iter(f"{NS}text"))
    assert int(short.get("width")) >= 560 and "max-width:100%" in short.get("style")  # shrinks, never stretches


def test_matrix_colours_each_cell_and_marks_links_above_gold_outlines():
    w = np.array([[0.9, np.nan, 0.0], [0.2, 0.7, np.inf]])
    el = ET.fromstring(svg.matrix_svg(w, SRC, TGT, {(0, 0), (1, 1)}, sure={(0, 0)}, possible={(0, 0), (1, 1)}))
    cells = [r for r in el.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]
    assert len(cells) == 6
    assert cells[0].get("fill") == figures.colour_at(0.9) and cells[2].get("fill") == figures.colour_at(0.0)
    assert cells[1].get("fill") == svg.BLANK and "not a number" in cells[1].find(f"{NS}title").text
    assert cells[5].get("fill") == svg.BLANK  # inf is not a weight either
    assert "target 1 chat ← source 1 <cat>\nweight 0.700" in tooltips(el)
    assert {"0 le", "1 chat", "0 the", "1 <cat>", "source word", "target word"} <= set(texts(el))
    shapes = [(e.tag.removeprefix(NS), e.get("stroke"), e.get("fill")) for e in el.iter()
              if e.get("pointer-events") == "none"]
    outlines = [i for i, s in enumerate(shapes) if s[1] == svg.GOLD]
    dots = [i for i, s in enumerate(shapes) if s[0] == "circle"]
    assert len(outlines) == 2 and len(dots) == 2  # a sure square and a possible diamond; two predicted dots
    assert {shapes[i][0] for i in outlines} == {"rect", "polygon"} and all(s[2] == "none" for s in shapes[:2])
    assert min(dots) > max(outlines)  # drawn later: a found link's dot is never hidden under its gold outline
    assert {"sure gold", "possible gold", "predicted · sure gold (hit)", "predicted · possible gold"} <= set(texts(el))


def test_a_matrix_above_image_cells_is_one_image_with_its_marks_and_labels_still_drawn():
    n = int(np.sqrt(svg.IMAGE_CELLS)) + 1
    w = np.full((n, n), 0.5)
    w[0, 0] = np.nan
    words = [f"w{i}" for i in range(n)]
    out = svg.matrix_svg(w, words, words, {(i, i) for i in range(n)}, sure={(0, 0)}, possible={(0, 0)})
    el = ET.fromstring(out)
    images = list(el.iter(f"{NS}image"))
    assert len(images) == 1 and images[0].get("href").startswith("data:image/png;base64,")
    assert not [r for r in el.iter(f"{NS}rect") if r.find(f"{NS}title") is not None]  # no rectangle per cell
    assert len(out) < 1_000_000  # 160,000 cells took ~22 MB as rectangles
    assert len([c for c in el.iter(f"{NS}circle") if c.get("pointer-events") == "none"]) == n  # every link dot
    assert {f"{n - 1} w{n - 1}", "sure gold"} <= set(texts(el))
    small = ET.fromstring(svg.matrix_svg(w[:3, :3], words[:3], words[:3], set()))
    assert not list(small.iter(f"{NS}image"))


def test_colours_at_is_colour_at_for_many_values():
    v = np.array([[-1.0, 0.0, 0.15], [0.5, 0.99, 2.0]])
    assert figures.colours_at(v) == [figures.colour_at(x) for x in v.ravel()]


def test_bad_shapes_and_links_say_what_is_wrong():
    with pytest.raises(ValueError, match="weights are"):
        svg.matrix_svg(np.zeros((3, 3)), SRC, TGT, set())
    with pytest.raises(ValueError, match="outside 3 source and 2 target words"):
        svg.links_svg(SRC, TGT, {(5, 0)})
