"""align's counting done in whole arrays gives the counts of its definitions: every method's (|A|, |S|, |A&S|,
|A&P|) as extracting each method on its own would, the breakdown's groups as counting link by link would, and
the per-sentence rows kept as flat integers and written to JSON as the list of SentenceScore would be."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from attention_lens.model.analysis.alignment.breakdown import (
    DISTANCE_BANDS,
    LENGTH_BANDS,
    Breakdown,
    WordStats,
    _band_name,
    band_of,
)
from attention_lens.model.analysis.alignment.links import Gold
from attention_lens.model.analysis.alignment.methods import extract
from attention_lens.model.analysis.alignment.report import SentenceScore
from attention_lens.model.analysis.alignment.scoring import Tally, gold_matrices
from attention_lens.model.analysis.alignment.sentences import SentenceRows, write_summary
from attention_lens.model.analysis.alignment.words import READINGS, WordAttention


def _sentence(rng: np.random.Generator, layers: int, heads: int, m: int, n: int) -> tuple[WordAttention, Gold]:
    def attention() -> np.ndarray:
        w = rng.random((layers, heads, m, n)) ** 4  # peaked rows, as trained heads have
        w[..., rng.integers(0, m), :] = 0.0  # a row with no weight: no argmax link there
        w[0, 0, 0, :] = 0.25  # a tie: the first column wins
        return w / np.maximum(w.sum(axis=-1, keepdims=True), 1e-12)

    links = {(int(rng.integers(0, n)), int(rng.integers(0, m))) for _ in range(m + n)}
    sure = frozenset(sorted(links)[::2])
    wa = WordAttention(tuple(f"s{k}" for k in range(n)), tuple(f"t{k}" for k in range(m)), attention(), attention())
    return wa, Gold(sure, frozenset(links))


def _block_by_definition(tally: Tally, wa: WordAttention, gold: Gold) -> np.ndarray:
    """Each candidate method extracted on its own (methods.extract) and counted against the gold."""
    sure, possible = gold_matrices(gold, len(wa.target_words), len(wa.source_words))
    rows = []
    for method in tally.methods:
        a = extract(wa.matrix(method.reading, method.layer, method.head), method.extract, method.threshold)
        rows.append((a.sum(), sure.sum(), (a & sure).sum(), (a & possible).sum()))
    return np.array(rows, dtype=np.int64)


@pytest.mark.parametrize("layers, heads, m, n", [(3, 4, 7, 9), (2, 8, 1, 5), (1, 1, 6, 1), (6, 8, 23, 19)])
def test_every_methods_counts_are_those_of_extracting_it_alone(layers, heads, m, n):
    rng = np.random.default_rng(layers * 100 + m)
    tally = Tally(layers, heads, (0.1, 0.2, 0.3, 0.4, 0.5, 0.05))
    for _ in range(3):
        wa, gold = _sentence(rng, layers, heads, m, n)
        block = tally.block(wa, gold)
        assert block.dtype == np.int64 and block.shape == (len(tally.methods), 4)
        np.testing.assert_array_equal(block, _block_by_definition(tally, wa, gold))


def test_pooling_matrices_are_those_of_their_definition():
    """words.pooling, built from index arrays: row w is the indicator of group w's positions (divided by the
    group's size when `mean`), empty groups (a dropped last row) and no groups included."""
    from attention_lens.model.analysis.alignment.words import pooling

    for groups, size in (([[0], [1, 2], [3, 4, 5]], 7), ([[0, 1, 2], [], [4]], 5), ([], 3), ([[]], 2),
                         ([[2], [0, 1]], 3)):
        for mean in (True, False):
            expected = np.zeros((len(groups), size))
            for w, g in enumerate(groups):
                for k in g:
                    expected[w, k] = 1.0 / len(g) if mean else 1.0
            got = pooling(groups, size, mean)
            assert got.dtype == np.float64 and got.shape == (len(groups), size)
            np.testing.assert_array_equal(got, expected)


def _breakdown_by_definition(stats: WordStats, sentences) -> dict[str, dict[str, list[int]]]:
    """Every link looked at one by one: its source word's band and classes, its sentence's length band and its
    own distance band; five counts (predicted, sure, possible, hits_sure, hits_possible) per band."""
    out: dict[str, dict[str, list[int]]] = {g: {} for g in ("frequency", "token_class", "length", "distance")}

    def add(group: str, band: str, k: int, value: int) -> None:
        out[group].setdefault(band, [0] * 5)[k] += value

    for words, pieces, predicted, sure, possible in sentences:
        m, n = predicted.shape
        mats = (predicted, sure, possible, predicted & sure, predicted & possible)
        for t in range(m):
            for s in range(n):
                d = round(abs(s - t * n / m))
                dband = next(_band_name(lo, hi) for lo, hi in DISTANCE_BANDS if d >= lo and (hi is None or d <= hi))
                for k, mat in enumerate(mats):
                    v = int(mat[t, s])
                    add("frequency", stats.band(words[s]), k, v)
                    for c in stats.classes(words[s], pieces[s]):
                        add("token_class", c, k, v)
                    add("length", band_of(n, LENGTH_BANDS), k, v)
                    add("distance", dband, k, v)
    return out


def test_breakdown_groups_are_the_counts_of_each_link_looked_at_alone():
    rng = np.random.default_rng(7)
    stats = WordStats.of({"the": 5000, "house": 40, "runs": 3, "walked": 0}, "training")
    vocab = ["the", "house", "runs", "walked", "Paris", "3", ",", "unseen"]
    sentences = []
    for m, n in [(5, 6), (1, 4), (9, 3), (30, 25)]:
        words = [vocab[int(k)] for k in rng.integers(0, len(vocab), n)]
        pieces = [int(k) for k in rng.integers(1, 3, n)]
        predicted, sure = rng.random((m, n)) < 0.3, rng.random((m, n)) < 0.2
        sentences.append((words, pieces, predicted, sure, sure | (rng.random((m, n)) < 0.1)))
    bd = Breakdown(stats)
    for words, pieces, predicted, sure, possible in sentences:
        bd.add_links(words, pieces, predicted, sure, possible)
    expected = _breakdown_by_definition(stats, sentences)
    got = {g: {band: row.tolist() for band, row in bands.items()} for g, bands in bd.counts.items()}
    assert got == expected


def test_sentence_rows_hand_back_every_sentence_in_line_order_and_write_the_same_json():
    rng = np.random.default_rng(3)
    scores = []
    for index in rng.permutation(200):
        sure = int(rng.integers(0, 9))
        scores.append(SentenceScore(int(index), sure, sure + int(rng.integers(0, 3)), int(rng.integers(0, 9)),
                                    int(rng.integers(0, sure + 1)), 0, selection=bool(index % 7 == 0),
                                    omitted=tuple(int(x) for x in rng.integers(0, 9, int(rng.integers(0, 3))))))
    rows = SentenceRows(scores)
    in_order = sorted(scores, key=lambda r: r.index)
    assert list(rows) == in_order and len(rows) == 200
    summary = {"n": 200, "aer": 0.5, "sentences": [r.as_dict() for r in in_order], "merge": {"kind": "align"}}
    out = io.StringIO()
    write_summary(summary, rows, out)
    assert json.loads(out.getvalue()) == summary
    reported = [r for r in in_order if not r.selection]
    worst = sorted(reported, key=lambda r: (-r.counts.aer, r.index))[:5]
    assert rows.worst(5) == worst


def test_a_tally_rejects_a_sentence_of_another_shape():
    wa, gold = _sentence(np.random.default_rng(1), 2, 2, 3, 3)
    with pytest.raises(ValueError, match="heads"):
        Tally(3, 2).block(wa, gold)
    assert READINGS == ("plain", "shift")


def test_cpu_threads_are_the_idle_cores_or_the_number_asked(monkeypatch):
    import os

    import torch
    from attention_lens.model.engine import device

    default = torch.get_num_threads()
    assert device.cpu_threads(3) == 3
    with pytest.raises(ValueError, match="at least 1"):
        device.cpu_threads(0)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (20.3, 0.0, 0.0))  # a shared machine, far busier than its cores
    assert device.cpu_threads() == 1
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))  # idle: torch's own default
    assert device.cpu_threads() == min(default, 2)


def test_sinks_read_with_a_shared_memo_of_pieces_are_the_sinks_read_alone():
    """aligned._sinks remembers each piece's kind (special, punctuation) across sentences: the masses are those
    found without the memo, sentence after sentence, whatever pieces the memo already holds."""
    from attention_lens.model.analysis.alignment.sentence_attention import _sinks

    rng = np.random.default_rng(3)
    specials = frozenset({"</s>", "<pad>"})
    kinds: dict[str, tuple[bool, bool]] = {}
    for pieces in (["▁Das", "▁ist", "▁gut", "▁", ".", "</s>"], ["▁Ja", ",", "▁gut", "!", "</s>"],
                   ["▁«", "▁Haus", "»", "▁", ".", "</s>", "<pad>"], ["▁1.", "▁", "-", "</s>"]):
        cross = rng.random((3, 4, 5, len(pieces))).astype(np.float32)
        alone = _sinks(cross, pieces, specials)
        np.testing.assert_array_equal(_sinks(cross.astype(np.float64), pieces, specials, kinds), alone)
        assert alone[0].sum() > 0 and alone[1].sum() > 0
    assert kinds["</s>"] == (True, False) and kinds["."] == (False, True) and kinds["▁Das"] == (False, False)
