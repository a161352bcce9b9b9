"""Word alignment from cross-attention: metrics, Pharaoh links, piece merging, readings, the align command."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from attention_lens.model.analysis.alignment import (
    Counts,
    Gold,
    Method,
    WordMismatch,
    count,
    extract,
    format_pharaoh,
    links_of,
    parse_pharaoh,
    query_rows,
    run_alignment,
    scores,
    word_attention,
    word_groups,
)
from attention_lens.model.cli import main
from attention_lens.model.corpora import Example, read_tsv

from harness.models.tiny import SOURCES, TARGETS
from tests.fixtures.checkpoints import shipped_checkpoint

ROOT = Path(__file__).resolve().parents[2]
GOLD = Gold(frozenset({(0, 0), (1, 1)}), frozenset({(0, 0), (1, 1), (1, 2)}))


# ---- metrics (Och & Ney 2003) ------------------------------------------------------------------------------
def test_perfect_alignment_has_aer_zero():
    assert scores(GOLD.sure, GOLD) == {"aer": 0.0, "precision": 1.0, "recall": 1.0}


def test_predicting_the_possible_links_too_still_has_aer_zero():
    assert scores(GOLD.possible, GOLD)["aer"] == 0.0


def test_empty_alignment_has_aer_one():
    assert scores([], GOLD) == {"aer": 1.0, "precision": 0.0, "recall": 0.0}


def test_possible_links_count_for_precision_only():
    r = scores([(1, 2)], GOLD)  # a possible link only
    assert r["precision"] == 1.0
    assert r["recall"] == 0.0
    assert r["aer"] == pytest.approx(1 - (0 + 1) / (1 + 2))


def test_hand_worked_example():
    # A = {0-0, 1-2, 2-2}: |A| = 3, |S| = 2, |A&S| = 1 (0-0), |A&P| = 2 (0-0, 1-2).
    c = count([(0, 0), (1, 2), (2, 2)], GOLD)
    assert c == Counts(a=3, s=2, a_s=1, a_p=2)
    assert c.precision == pytest.approx(2 / 3)
    assert c.recall == pytest.approx(1 / 2)
    assert c.aer == pytest.approx(1 - 3 / 5)


def test_corpus_level_sums_counts_before_dividing():
    total = count([(0, 0)], GOLD) + count([(5, 5)], Gold(frozenset({(5, 5)}), frozenset({(5, 5)})))
    assert total == Counts(2, 3, 2, 2)
    assert total.aer == pytest.approx(1 - 4 / 5)  # a mean of the two sentences' AERs would be 1/6


# ---- Pharaoh ------------------------------------------------------------------------------------------------
def test_parse_pharaoh_sure_and_possible():
    g = parse_pharaoh("0-0 1?2  2-1 1-1")
    assert g.sure == {(0, 0), (2, 1), (1, 1)}
    assert g.possible == g.sure | {(1, 2)}
    assert parse_pharaoh("") == Gold(frozenset(), frozenset())
    assert parse_pharaoh("3?4 3-4").sure == {(3, 4)}  # given both ways: sure


@pytest.mark.parametrize("bad", ["0-", "a-1", "0:1", "1-2-3", "-1-2", "0 - 1"])
def test_parse_pharaoh_rejects_malformed_links(bad):
    with pytest.raises(ValueError, match="is not 'i-j'"):
        parse_pharaoh(bad)


def test_gold_check_names_out_of_range_links():
    with pytest.raises(ValueError, match="2-0 is outside"):
        parse_pharaoh("0-0 2-0").check(2, 3)


def test_format_pharaoh_round_trips():
    assert format_pharaoh([(1, 0), (0, 1)], possible=[(2, 1)]) == "1-0 0-1 2?1"
    g = parse_pharaoh(format_pharaoh(GOLD.sure, GOLD.possible))
    assert g == GOLD


# ---- pieces to words ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("pieces, specials, groups", [
    (["▁the", "▁ca", "t", "▁sat", "▁.", "</s>"], None, [[0], [1, 2], [3], [4]]),
    (["<s>", "the", "Ġca", "t", "Ġ.", "</s>"], None, [[1], [2, 3], [4]]),  # byte-level BPE: first word unmarked
    (["the", "ca", "##t", ".", "</s>"], None, [[0], [1, 2], [3]]),  # WordPiece: punctuation is its own word
    ([">>fr<<", "▁le", "▁chat", "</s>"], {">>fr<<", "</s>"}, [[1], [2]]),  # a language code is in no word
    (["▁", "l", "'", "▁oiseau"], None, [[0, 1, 2], [3]]),  # a bare word-start piece starts the word
    (["▁a", "</s>", "b", "c"], None, [[0], [2, 3]]),  # a piece after a special starts a word
    (["▁s", "'", "▁a", "<unk>", "▁."], None, [[0, 1], [2, 3], [4]]),  # <unk> stands for part of a word
])
def test_word_groups(pieces, specials, groups):
    kw = {} if specials is None else {"specials": specials}
    assert word_groups(pieces, **kw) == groups


def test_word_mismatch_is_reported_with_the_grouping():
    with pytest.raises(WordMismatch, match=r"3 words .* group into 2: \[▁the\] \[▁ca t\]"):
        word_attention(np.full((1, 1, 1, 3), 1 / 3), ["▁the", "▁ca", "t"], ["</s>"], ["the", "ca", "t"], [])


def test_word_attention_sums_key_pieces_and_averages_query_pieces():
    src = ["▁ca", "t", "▁sat", "</s>"]  # 2 words
    tgt = ["▁cha", "t", "▁s'", "</s>"]  # 2 words, rows 0-1 predict "chat"
    cross = np.array([[0.2, 0.3, 0.4, 0.1], [0.6, 0.2, 0.1, 0.1], [0.1, 0.0, 0.8, 0.1], [0.0, 0.0, 0.0, 1.0]])
    wa = word_attention(cross[None, None], src, tgt, ["cat", "sat"], ["chat", "s'"])
    np.testing.assert_allclose(wa.plain[0, 0], [[(0.5 + 0.8) / 2, (0.4 + 0.1) / 2], [0.1, 0.8]])
    # shift-aware: "chat" is the input of rows 1 and 2, "s'" of row 3
    np.testing.assert_allclose(wa.shift[0, 0], [[(0.8 + 0.1) / 2, (0.1 + 0.8) / 2], [0.0, 0.0]])


def test_query_rows_shift_reads_the_row_where_the_word_is_input():
    groups = [[0], [1, 2], [3]]
    assert query_rows(groups, 5, "plain") == groups
    assert query_rows(groups, 5, "shift") == [[1], [2, 3], [4]]
    assert query_rows(groups, 4, "shift") == [[1], [2, 3], []]  # the last label is nobody's input
    assert query_rows(groups, 4, "shift", shift=False) == groups  # without the shift, row t reads label t


def test_shift_aware_reading_on_a_hand_built_matrix():
    # Rows predict "le chat ." then </s>; each row already looks at the NEXT word's source (a shifted head).
    src, tgt = ["▁the", "▁cat", "▁.", "</s>"], ["▁le", "▁chat", "▁.", "</s>"]
    cross = np.zeros((4, 4))
    cross[0, 3] = 1.0  # BOS row: nothing to align yet
    cross[1, 0] = cross[2, 1] = cross[3, 2] = 1.0  # row t+1 attends source word t
    wa = word_attention(cross[None, None], src, tgt, ["the", "cat", "."], ["le", "chat", "."])
    plain = links_of(extract(wa.matrix("plain", 1, 1), "argmax"))
    shift = links_of(extract(wa.matrix("shift", 1, 1), "argmax"))
    assert sorted(shift) == [(0, 0), (1, 1), (2, 2)]
    assert sorted(plain) == [(0, 1), (1, 2)]  # row 0 has no word weight: no link


def test_extractions():
    w = np.array([[0.6, 0.35], [0.5, 0.1]])  # [target, source]
    assert sorted(links_of(extract(w, "argmax"))) == [(0, 0), (0, 1)]
    assert sorted(links_of(extract(w, "threshold", 0.3))) == [(0, 0), (0, 1), (1, 0)]
    assert links_of(extract(w, "inter")) == [(0, 0)]  # source 1's best target is 0, but target 1's best is 0
    assert sorted(links_of(extract(w, "union"))) == [(0, 0), (0, 1), (1, 0)]


@pytest.mark.parametrize("name, expected", [
    ("argmax-shift-L2H1", Method("argmax", "shift", 2, 1)),
    ("argmax-shift-layer2", Method("argmax", "shift", 2, None)),
    ("argmax-mean", Method("argmax")),
    ("threshold0.2-plain-mean", Method("threshold", "plain", threshold=0.2)),
    ("union-plain-L1H4", Method("union", "plain", 1, 4)),
])
def test_method_names(name, expected):
    assert Method.parse(name) == expected
    assert Method.parse(expected.name) == expected


@pytest.mark.parametrize("bad", ["max-shift", "argmax-sideways-L1H1", "argmax-shift-H1", "argmax0.3", "threshold0"])
def test_bad_method_names(bad):
    with pytest.raises(ValueError):
        Method.parse(bad)


# ---- the engine path and the command ------------------------------------------------------------------------
def test_align_cli_json(tiny_ckpt, small_tsv, tmp_path, capsys):
    out = tmp_path / "links.txt"
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(small_tsv), "--method", "argmax-shift-L2H1",
                 "--json", "--out", str(out), "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"n", "method", "aer", "precision", "recall", "heads", "readings"} <= set(result)
    assert result["n"] == 6 and result["n_scored"] == 5 and result["method"] == "argmax-shift-L2H1"
    assert len(result["heads"]) == 2 * 4
    assert {(h["layer"], h["head"]) for h in result["heads"]} == {(li, hi) for li in (1, 2) for hi in (1, 2, 3, 4)}
    assert result["aer"] == next(h["aer"] for h in result["heads"] if (h["layer"], h["head"]) == (2, 1))
    assert set(result["readings"]) == {"plain", "shift"}
    assert result["readings"]["shift"]["aer"] == result["aer"]
    assert all(0 <= result[k] <= 1 for k in ("aer", "precision", "recall"))
    lines = out.read_text().splitlines()
    assert len(lines) == 6
    target_words = [len(t.split()) for t in TARGETS]
    for line, m in zip(lines, target_words):  # argmax: one link per target word
        assert sorted(int(x.split("-")[1]) for x in line.split()) == list(range(m))


def test_align_cli_best_and_text_output(tiny_ckpt, small_tsv, capsys):
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(small_tsv), "--method", "best", "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "same sentences" in text  # fewer than 20 gold sentences: says the figure is in-sample
    assert "AER of every head" in text


def test_align_cli_best_selected_on_another_file(tiny_ckpt, small_tsv, capsys):
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(small_tsv), "--method", "best", "--select-on",
                 str(small_tsv), "--json", "--quiet"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["selection"]["chosen_on"] == result["selection"]["reported_on"] == 5
    assert "separate selection" in result["selection"]["note"]
    assert result["method"] in {result["readings"]["plain"]["method"], result["readings"]["shift"]["method"]}


def test_align_cli_without_gold_writes_links_and_skips_metrics(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "nogold.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in zip(SOURCES[:3], TARGETS[:3])), encoding="utf-8")
    out = tmp_path / "links.txt"
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(data), "--json", "--out", str(out),
                 "--quiet"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["aer"] is None and result["n"] == 3
    assert "no gold links" in captured.err
    assert len(out.read_text().splitlines()) == 3


def test_align_cli_reports_bad_gold(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "bad.tsv"
    data.write_text(f"{SOURCES[0]}\t{TARGETS[0]}\t0-0 1:1\n", encoding="utf-8")
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(data), "--quiet"]) == 2
    assert "line 1" in capsys.readouterr().err  # the file's line (align reads it as a stream)


def test_align_on_a_tiny_hugging_face_model(tmp_path):
    from attention_lens.model.hf.engine import HFEngine

    from harness.models.hf_tiny import SENTENCES, build_bart, build_marian

    pairs = [(SENTENCES[i], SENTENCES[i + 5]) for i in range(5)]
    rows = [Example(s, t, " ".join(f"{k}-{k}" for k in range(min(len(s.split()), len(t.split())))))
            for s, t in pairs]
    for build in (build_marian, build_bart):  # "▁" SentencePiece and "Ġ" byte-level BPE pieces
        engine = HFEngine.load(str(build(tmp_path / build.__name__)))
        report = run_alignment(engine, rows, "argmax-plain-mean", progress=False)
        assert report.skipped == []
        summary = report.summary()
        assert len(summary["heads"]) == engine.n_decoder_layers * engine.n_heads
        assert 0 <= summary["aer"] <= 1
        assert all(len(report.links[k]) == len(t.split()) for k, (_, t) in enumerate(pairs))  # one per word


# ---- the shipped models ------------------------------------------------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("pair", ["en-fr", "de-en"])
def test_shipped_model_aligns_within_ten_percent_aer(pair):
    folder = shipped_checkpoint(pair)
    from attention_lens.model.corpora import generate
    from attention_lens.model.engine.loader import load_engine

    rows = read_tsv(ROOT / "assets" / "data" / f"{pair}.test.tsv")[:200]
    valid = generate(pair, n_train=0)["valid"][:200]  # the method is chosen here, not on the test sentences
    report = run_alignment(load_engine(folder), rows, "best", progress=False, select_on=valid)
    summary = report.summary()
    assert not report.skipped
    assert summary["selection"]["chosen_on"] == 200 and summary["selection"]["reported_on"] == 200
    assert summary["aer"] <= 0.10, summary


def test_trace_and_batched_corpus_paths_agree(tiny_engine):
    from attention_lens.model.analysis.alignment import align_corpus, engine_specials, trace_word_attention
    from attention_lens.model.engine import DecodeOptions

    rows = [Example(s, t, "") for s, t in zip(SOURCES, TARGETS)]
    batched = list(align_corpus(tiny_engine, rows, batch_size=4, progress=False))
    assert [a.index for a in batched] == list(range(len(rows)))
    for row, item in zip(rows, batched):
        trace = tiny_engine.trace(row.source, target=row.target, options=DecodeOptions(mode="teacher_forced"))
        one = trace_word_attention(trace, row.target.split(), engine_specials(tiny_engine))
        assert one.source_words == item.attention.source_words
        np.testing.assert_allclose(one.plain, item.attention.plain, atol=1e-5)
        np.testing.assert_allclose(one.shift, item.attention.shift, atol=1e-5)
