"""The corpus stream (model.engine.stream): lazy reading, shards, bounded-window length bucketing."""

from __future__ import annotations

import gzip

import pytest
from attention_lens.model.engine.stream import (
    BadLine,
    CorpusStream,
    Line,
    Shard,
    auto_batch_size,
    batches,
    count_lines,
    read_lines,
)


def write(tmp_path, lines, name="d.tsv"):
    path = tmp_path / name
    path.write_bytes(b"\n".join(lines) + b"\n")
    return str(path)


def test_shards_partition_the_lines_round_robin(tmp_path):
    path = write(tmp_path, [f"s{i}\tt{i}".encode() for i in range(1, 12)])
    seen = []
    for k in range(1, 5):
        got = [line.number for line in read_lines(path, Shard(k, 4))]
        assert all((n - 1) % 4 == k - 1 for n in got)
        assert len(got) == Shard(k, 4).share(11)
        seen += got
    assert sorted(seen) == list(range(1, 12))


@pytest.mark.parametrize("text", ["0/4", "5/4", "x", "1-4", "2/"])
def test_bad_shard_is_one_clear_error(text):
    with pytest.raises(ValueError, match="K/N"):
        Shard.parse(text)


def test_bad_lines_are_reported_or_refused(tmp_path):
    path = write(tmp_path, [b"a\tb", b"", b"only", b"c\t\xff", b"d\te\t0-0"])
    items = list(read_lines(path))
    assert [type(i) for i in items] == [Line, BadLine, BadLine, Line]
    assert items[-1] == Line(5, "d", "e", "0-0")
    assert "not UTF-8" in items[2].reason and "line 4" in items[2].reason
    with pytest.raises(ValueError, match=r"d.tsv:3"):
        list(read_lines(path, strict=True))


def test_gzip_and_count(tmp_path):
    path = tmp_path / "d.tsv.gz"
    with gzip.open(path, "wb") as f:
        f.write(b"a\tb\nc\td")  # no final line break
    assert count_lines(str(path)) == 2
    assert [x.number for x in read_lines(str(path))] == [1, 2]


def test_batches_bucket_by_length_within_the_window_and_keep_every_line():
    lines = [Line(i, "w" * (i * 7 % 13 + 1), "t") for i in range(1, 101)]
    out = list(batches(iter(lines), batch_size=8, window=32))
    assert sorted(x.number for b in out for x in b) == list(range(1, 101))
    assert all(len(b) <= 8 for b in out)
    # within a window batches are sorted by length; no batch mixes two windows
    for b in out:
        windows = {(x.number - 1) // 32 for x in b}
        assert len(windows) == 1
        assert [len(x.source) for x in b] == sorted(len(x.source) for x in b)


def test_batch_tokens_bound_the_padded_size():
    lines = [Line(i, "w" * (10 if i % 2 else 40), "") for i in range(1, 41)]
    for b in batches(iter(lines), batch_size=100, batch_tokens=200):
        assert len(b) == 1 or max(len(x.source) for x in b) * len(b) <= 200


def test_stream_holds_a_bounded_window(tmp_path, monkeypatch):
    """The stream never holds more than `window` parsed lines: reading stops window lines ahead of the batches."""
    path = write(tmp_path, [f"s{i}\tt{i}".encode() for i in range(1, 1001)])
    stream = CorpusStream(path, batch_size=10, window=50, progress=False)
    read = []
    import attention_lens.model.engine.stream as module

    original = module.read_lines

    def counting(*a, **k):
        for item in original(*a, **k):
            read.append(item.number)
            yield item

    monkeypatch.setattr(module, "read_lines", counting)
    for _batch in stream:
        assert len(read) - stream.lines <= 50
    assert stream.lines == 1000


def test_auto_batch_size_is_bounded():
    assert auto_batch_size(1) == 256
    assert auto_batch_size(10 ** 15) == 1


def test_an_upload_in_memory_streams_like_a_file():
    items = list(read_lines(b"a\tb\n\nonly\nc\td\t0-0\n"))
    assert items[0] == Line(1, "a", "b") and items[2] == Line(4, "c", "d", "0-0")
    assert isinstance(items[1], BadLine) and items[1].number == 3
