"""The Alignment page reads an upload whole, as a stream: a file of more than 5,000 sentences is aligned whole (no
line cap, no "use the first part" offer; the size cap is stated), the report keeps a few integers a sentence (never
a sentence's attention, which is computed again when the sentence is opened), and what it counts for every method
at once is what one method counted alone gives: the tally, each sentence's counts, the breakdown, the heads'
agreement and the download's links."""

from __future__ import annotations

import gc
import tracemalloc
from collections import Counter

import numpy as np
import pytest
from attention_lens.app.uploads import UPLOAD_CAP_TEXT
from attention_lens.model.analysis.alignment import Method, extract, format_pharaoh, gold_matrices, links_of, uploads
from attention_lens.model.analysis.alignment.breakdown import Breakdown
from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.analysis.alignment.sentence_attention import align_batches
from attention_lens.model.engine.stream import Line

from harness.models.tiny import SOURCES, TARGETS
from tests.fixtures.apptest import ALIGNMENT, page_on, upload

GOLD = ["0-0 1-1 2-2 3-3", "0-0 1-1 2-2 3-3 6-4", "0-0 1-1 2-2", "0-0 1-1 2-2 4-4", "0-0 1-1 3-2", "0-0 1-1"]
LINES = [f"{s}\t{t}\t{g}\n" for s, t, g in zip(SOURCES, TARGETS, GOLD)]


def lines(n: int, gold_every: int = 1) -> str:
    """n lines cycling through the six pairs; every gold_every-th keeps its gold; a blank line after every 7th."""
    out = []
    for k in range(n):
        line = LINES[k % len(LINES)]
        out.append(line if k % gold_every == 0 else "\t".join(line.split("\t")[:2]) + "\n")
        if k % 7 == 6:
            out.append("\n")
    return "".join(out)


@pytest.mark.slow  # about 30 s of CPU: 6,000 sentences through the tiny model
def test_a_file_of_6000_sentences_is_aligned_whole_and_the_page_states_the_size_cap(tiny_ckpt, monkeypatch):
    at = page_on(monkeypatch, ALIGNMENT, [tiny_ckpt], preset="custom", source=SOURCES[0], target=TARGETS[0],
                 align_n=20, timeout=300)
    assert UPLOAD_CAP_TEXT in at.file_uploader(key="align_upload").label
    upload(at, lines(6000))
    assert not at.exception
    assert not [b for b in at.button if b.key == "align_first_part"]  # no "use the first 5,000" offer
    assert not at.warning, [w.value for w in at.warning]
    captions = [c.value for c in at.caption]
    assert any(c.startswith("6,000 of 6,000 sentences aligned · 6,000 with gold links") for c in captions), captions
    assert any(UPLOAD_CAP_TEXT in c for c in captions), captions
    assert any("6000 sentences with gold" in s.value for s in at.success)
    table = at.dataframe(key="align_upload_worst").value
    assert len(table) == 5000 and list(table["AER"]) == sorted(table["AER"], reverse=True)
    assert table["line"].max() > 6000  # lines of the file (blank lines counted), past the old cap


def test_the_report_holds_a_few_bytes_a_sentence_and_no_attention(tiny_engine):
    """Memory kept after aligning 200 and 2,000 lines (tracemalloc, the report alive): grows by < 200 bytes a
    sentence, the file's own bytes aside (the attention kept before was thousands of bytes a sentence)."""
    kept = {}
    for n in (200, 2000):
        data = lines(n).encode()
        gc.collect()
        tracemalloc.start()
        base = tracemalloc.get_traced_memory()[0]
        report = uploads.align_upload(tiny_engine, data)
        gc.collect()
        kept[n] = tracemalloc.get_traced_memory()[0] - base - len(data)
        tracemalloc.stop()
        assert report.n_aligned == n and not hasattr(report, "attention_of_every_sentence")
        assert not any(isinstance(v, dict) and len(v) >= n for v in vars(report).values())
        del report
    assert (kept[2000] - kept[200]) / 1800 < 200, kept


def _one_method(engine, report, method):
    """What the old page computed for one method, sentence by sentence from each one's attention: its counts per
    sentence, a Breakdown fed its links, the links of every head for the agreement, the download's lines."""
    analysis = Breakdown(report.stats)
    counts, heads, links = [], {}, {}
    for line in report.aligned_lines():
        ex = report.example(line)
        item = next(align_batches(engine, [[(line, Line(line + 1, ex.source, ex.target, ex.gold))]]))
        wa, _ = uploads.own_words(item, ex)
        pieces = item.pieces if len(item.pieces) == len(wa.source_words) else ()
        mask = extract(wa.matrix(method.reading, method.layer, method.head), method.extract, method.threshold)
        links[line] = links_of(mask)
        analysis.add_omissions(wa.source_words, mask, wa.matrix(method.reading, None, None).sum(axis=0))
        for li in range(1, wa.layers + 1):
            for hi in range(1, wa.heads + 1):
                pick = Method(method.extract, method.reading, li, hi, method.threshold)
                heads.setdefault((li, hi), []).append(set(pick.links(wa)))
        if ex.gold.strip():
            gold = parse_pharaoh(ex.gold)
            sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
            analysis.add_links(wa.source_words, pieces, mask, sure, possible)
            counts.append((line, int(sure.sum()), len(gold.possible), int(mask.sum()), int((mask & sure).sum()),
                           int((mask & possible).sum())))
    return counts, analysis.summary(), heads, links


@pytest.mark.parametrize("name", ["union-plain-L1H2", "threshold0.2-shift-L2H4", "argmax-plain-mean"])
def test_every_method_counted_at_once_equals_that_method_counted_alone(tiny_engine, name, monkeypatch):
    text = lines(40, gold_every=2) + "zz\tqq\t0-0\n"
    report = uploads.align_upload(tiny_engine, text.encode(), batch_size=8, window=16)
    method = Method.parse(name)
    counts, summary, heads, links = _one_method(tiny_engine, report, method)
    assert [tuple(r) for r in report.counts(method)] == counts
    got = report.breakdown(method)
    assert got["breakdown"] == summary["breakdown"]
    om, want = got["omissions"], summary["omissions"]
    assert {k: om[k] for k in ("source_words", "omitted")} == {k: want[k] for k in ("source_words", "omitted")}
    assert Counter({w["word"]: w["count"] for w in om["words"]}) == Counter({w["word"]: w["count"]
                                                                            for w in want["words"]})
    layers, n_heads = tiny_engine.n_decoder_layers, tiny_engine.n_heads
    names = [(li, hi) for li in range(1, layers + 1) for hi in range(1, n_heads + 1)]
    matrix = report.agreement(method, layers, n_heads)
    for a, first in enumerate(names):
        for b, second in enumerate(names):
            both = sum(len(x & y) for x, y in zip(heads[first], heads[second]))
            total = sum(len(x) + len(y) for x, y in zip(heads[first], heads[second]))
            assert matrix[a, b] == pytest.approx(2 * both / total if total and a != b else 1.0)
    # the download: one line per line of the file, a sentence's links on its own line, blank lines empty
    download = report.links_by_line(tiny_engine, method).split("\n")[:-1]
    assert len(download) == len(text.splitlines())
    for k, row in enumerate(download):
        assert row == (format_pharaoh(links[k]) if k in links else ""), k


def test_progress_counts_sentences_up_to_the_total_and_says_rate_and_time_left(tiny_engine):
    seen = []
    uploads.align_upload(tiny_engine, lines(100), batch_size=16, progress=lambda done, total: seen.append((done,
                                                                                                          total)))
    assert [t for _, t in seen] == [100] * len(seen) and seen[-1][0] == 100
    assert [d for d, _ in seen] == sorted(d for d, _ in seen) and len(seen) >= 100 // 16
    assert uploads.progress_text(2300, 5000, 5.0) == "2,300 of 5,000 sentences · 460 a second · 6 s left"
    assert uploads.progress_text(0, 5000, 0.0) == "0 of 5,000 sentences"


def test_an_opened_sentence_is_aligned_again_with_the_links_its_counts_say(tiny_engine):
    text = lines(12)
    report = uploads.align_upload(tiny_engine, text)
    method = Method.parse("union-plain-L2H1")
    by_line = {int(r[0]): r for r in report.counts(method)}
    for line in report.aligned_lines():
        wa = report.attention(tiny_engine, line)
        assert len(method.links(wa)) == by_line[line][3]  # |A|
        assert wa.source_words == tuple(report.example(line).source.split())
    assert np.all(report.lines[1:] > report.lines[:-1])
