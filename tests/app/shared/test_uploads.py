"""Uploads are capped by size, not by lines, and read as a stream (app.uploads.check_upload)."""

from __future__ import annotations

from attention_lens.app import uploads


def test_size_cap_is_one_sentence_that_names_the_cap():
    assert uploads.upload_size_problem("big.tsv", uploads.UPLOAD_MAX_BYTES) is None
    message = uploads.upload_size_problem("big.tsv", uploads.UPLOAD_MAX_BYTES + 1)
    assert "big.tsv" in message and uploads.UPLOAD_CAP_TEXT in message and "\n" not in message


def test_check_upload_reads_many_lines_and_names_bad_ones():
    lines = [f"source {i} .\tcible {i} ." for i in range(3000)]  # more than the old 1,000-line cap
    lines[1500] = "only a source"
    checked = uploads.check_upload(("\n".join(lines) + "\n").encode("utf-8"))
    assert (checked.pairs, checked.gold, checked.problem_count) == (2999, 0, 1)
    assert checked.first[-1] == ("source 99 .", "cible 99 .") and len(checked.first) == uploads.HEADS_NAMED
    assert checked.problems == ("line 1501: expected source<TAB>target[<TAB>gold], got 1 column(s)",)
