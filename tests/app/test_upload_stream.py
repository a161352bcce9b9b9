"""Uploads are capped by size, not by lines, and read as a stream (app.services.upload_pairs)."""

from __future__ import annotations

from attention_lens.app import services


def test_size_cap_is_one_sentence_that_names_the_cap():
    assert services.upload_size_problem("big.tsv", services.UPLOAD_MAX_BYTES) is None
    message = services.upload_size_problem("big.tsv", services.UPLOAD_MAX_BYTES + 1)
    assert "big.tsv" in message and services.UPLOAD_CAP_TEXT in message and "\n" not in message


def test_upload_pairs_reads_many_lines_and_names_bad_ones():
    lines = [f"source {i} .\tcible {i} ." for i in range(3000)]  # more than the old 1,000-line cap
    lines[1500] = "only a source"
    examples, problems = services.upload_pairs(("\n".join(lines) + "\n").encode("utf-8"))
    assert len(examples) == 2999 and examples[-1].target == "cible 2999 ."
    assert problems == ["line 1501: expected source<TAB>target[<TAB>gold], got 1 column(s)"]
