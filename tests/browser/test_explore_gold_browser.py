"""A sentence opened on Explore from the Alignment page (shipped en-fr, the test split's sentence the page offers
first, its worst) in Chromium: the stepper draws the gold links on the cells of the linked words' pieces (sure
solid, possible dashed), names them for screen readers, and hides them with its switch."""

from __future__ import annotations

import re

import pytest

from harness.browser import ATTENTION, IDLE, browser_page
from tests.fixtures.checkpoints import ROOT
from tests.fixtures.gold_cells import gold_cells

pytestmark = [pytest.mark.browser]
STEPPER = "[data-testid=lens-stepper]"
GOLD_COLOUR = (0xC2, 0x18, 0x5B)


def test_gold_links_opened_from_the_alignment_page_sit_on_their_cells(shipped_server):
    from attention_lens.model.builtin.engine import BuiltinEngine

    lines = (ROOT / "assets" / "data" / "en-fr.test.tsv").read_text(encoding="utf-8").splitlines()
    engine = BuiltinEngine.load(ROOT / "checkpoints" / "en-fr")
    with browser_page(f"{shipped_server}/Alignment?model=en-fr", 1366, 768, device_scale_factor=1) as page:
        page.locator(".st-key-align_shipped").wait_for(timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        page.locator(".st-key-align_shipped label").click()
        page.locator(".st-key-align_upload_explore button").wait_for(timeout=180_000)
        page.locator(IDLE).wait_for(timeout=180_000)
        # the sentence the page opens: its chooser's value, "N: source…" with N the line number
        shown = page.locator(".st-key-align_upload_sentence input[role=combobox]").input_value()
        source, target, gold = lines[int(re.match(r"(\d+): ", shown).group(1)) - 1].split("\t")
        src_pieces = engine.encode_source(engine.normalise(source))[1]
        tgt_pieces = [engine.piece(i) for i in engine.encode_target(engine.normalise_target(target))]
        expected = gold_cells(gold, src_pieces, tgt_pieces)
        page.locator(".st-key-align_upload_explore button").click()
        page.locator(f"{ATTENTION} canvas").first.wait_for(timeout=180_000)
        page.locator(f"{STEPPER} .lens-gold").wait_for(timeout=60_000)
        page.locator(IDLE).wait_for(timeout=60_000)
        page.locator(f"{STEPPER} .lens-last").click()  # every row: the whole picture with every gold link
        page.wait_for_function("() => { const s = document.querySelector('[data-testid=lens-stepper]');"
                               " return s && s.dataset.step === s.dataset.m; }", timeout=30_000)
        drawn = page.evaluate("() => JSON.parse(document.querySelector("
                              "'[data-testid=lens-stepper] .lens-panel').dataset.gold || '[]')")
        assert {tuple(x) for x in drawn} == expected
        assert any(s for *_, s in drawn) and len(drawn) >= len(gold.split())
        # the canvas really shows them: the gold colour on each sure cell's left outline
        colours = page.evaluate("""([cells]) => {
            const p = document.querySelector('[data-testid=lens-stepper] .lens-panel');
            const c = p.querySelector('canvas'), ctx = c.getContext('2d');
            const dpr = c.width / c.getBoundingClientRect().width;
            const cellW = c.getBoundingClientRect().width / p.querySelectorAll('.lens-k').length;
            const rowH = parseFloat(p.querySelector('.lens-outline').style.height);
            return cells.map(([r, k]) => { const inset = Math.min(2, cellW / 6, rowH / 6);
                const x = Math.round((k * cellW + inset) * dpr), y = Math.round((r + 0.5) * rowH * dpr);
                return Array.from(ctx.getImageData(x, y, 1, 1).data).slice(0, 3); }); }""",
                                [[list(x[:2]) for x in sorted(expected) if x[2]]])  # sure: solid outlines
        for rgb in colours:
            assert sum(abs(a - b) for a, b in zip(rgb, GOLD_COLOUR)) < 90, rgb
        described = page.locator(f"{STEPPER} .lens-sr").text_content()
        assert "Gold links drawn" in described and "sure:" in described
        page.locator(f"{STEPPER} .lens-gold-toggle").uncheck()
        assert page.evaluate("() => document.querySelector('[data-testid=lens-stepper] .lens-panel')"
                             ".dataset.gold === undefined")
        assert "Gold links drawn" not in page.locator(f"{STEPPER} .lens-sr").text_content()
