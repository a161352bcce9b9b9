"""An uploaded file of sentence pairs (the Alignment and Heads pages): the size cap the pages state, the file read
line by line and checked (nothing kept but counts, the first pairs and the problems), and the digest that names it.
What a model makes of a checked file (its alignment, its heads' ranking) is app.services'."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass

import streamlit as st
from attention_lens.model.corpora import Example
from attention_lens.model.engine.stream import BadLine, Line, read_lines

# Uploads are capped by size, not by lines: a file up to this many bytes is read as a stream (check_upload), so what
# a page holds grows with the pairs it keeps, never with a copy of the text. The pages state the cap.
UPLOAD_MAX_MB = 8
UPLOAD_MAX_BYTES = UPLOAD_MAX_MB * 1024 * 1024  # as Streamlit counts a megabyte (file_uploader's max_upload_size)
UPLOAD_CAP_TEXT = f"at most {UPLOAD_MAX_MB} MB"
# What the upload boxes let through to the page: a file over UPLOAD_MAX_MB and up to this reaches the page, which
# refuses it in words with what to do instead (upload_size_problem); past it the box's own refusal is a red chip
# whose reason shows only on hover.
UPLOAD_SEEN_MB = 64


def upload_size_problem(name: str, size: int) -> str | None:
    """One sentence when an upload is over UPLOAD_MAX_BYTES, naming the command that reads a file of any size."""
    if size <= UPLOAD_MAX_BYTES:
        return None
    return (f"{name} is {size / 1024 / 1024:.1f} MB; this page reads files of {UPLOAD_CAP_TEXT}. "
            "`attention-lens align` / `heads` / `eval --data FILE.tsv` read a file of any size (--shard K/N splits "
            "it).")


HEADS_NAMED = 100  # pairs of an upload named on the Heads page


@dataclass(frozen=True)
class CheckedUpload:
    """An upload of pairs read through once (upload_lines): how many pairs it holds (`gold`: how many of them with
    gold links), the first HEADS_NAMED of them, the problems (each naming its line; `problem_count` counts them
    all, the first MAX_PROBLEMS are kept) and the bytes' digest that names its ranking."""

    pairs: int
    gold: int
    first: tuple[tuple[str, str], ...]
    problems: tuple[str, ...]
    problem_count: int
    digest: str


MAX_PROBLEMS = 10


def upload_lines(data: bytes) -> Iterator[Line | BadLine]:
    """An upload's lines as model.engine.stream.read_lines reads them, a line whose gold column is not Pharaoh
    links that fit its words (or whose second column holds links) turned into a BadLine with the reason
    (model.analysis.alignment.uploads.line_problem)."""
    from attention_lens.model.analysis.alignment.uploads import line_problem

    for item in read_lines(data):
        if isinstance(item, Line) and (reason := line_problem(Example(item.source, item.target, item.gold))):
            yield BadLine(item.number, reason)
        else:
            yield item


@st.cache_data(max_entries=8, show_spinner="Reading your file…")
def check_upload(data: bytes) -> CheckedUpload:
    """An upload read line by line, nothing kept but counts, the first pairs and the problems."""
    pairs = gold = count = 0
    first: list[tuple[str, str]] = []
    problems: list[str] = []
    for item in upload_lines(data):
        if isinstance(item, BadLine):
            count += 1
            if len(problems) < MAX_PROBLEMS:
                problems.append(item.reason if item.reason.startswith("the upload, line")
                                else f"line {item.number}: {item.reason}")
            continue
        pairs += 1
        gold += bool(item.gold.strip())
        if len(first) < HEADS_NAMED:
            first.append((item.source, item.target))
    if not pairs and not count:
        problems, count = ["the file has no sentence pair"], 1
    return CheckedUpload(pairs, gold, tuple(first), tuple(problems), count, upload_digest(data))


def upload_digest(data: bytes) -> str:
    """The name of a file's bytes (sha256, hex): what a kept alignment or ranking of it is filed under."""
    return hashlib.sha256(data).hexdigest()
