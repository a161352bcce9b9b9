"""Per-sentence counts of a whole corpus kept compactly: a few integers per sentence in flat arrays (no object per
sentence), handed out in line order, and the `sentences` list of `align --json` written as it is read rather
than built in memory first."""

from __future__ import annotations

import json
import tempfile
from array import array
from collections.abc import Iterable, Iterator
from typing import IO, Any

import numpy as np
from attention_lens.model.analysis.alignment.links import Counts

_FIELDS = 7  # index, sure, possible, predicted, hits_sure, hits_possible, selection


class SentenceRows:
    """The counts of every scored sentence (as SentenceScore holds them) in flat integer arrays: about 64 bytes
    a sentence, whatever the corpus' size. Iterating gives SentenceScore objects in index order, one at a time."""

    def __init__(self, rows: Iterable[Any] = ()) -> None:
        self._counts = array("q")  # _FIELDS per sentence
        self._omitted = array("q")  # the omitted source words of every sentence, one after another
        self._ends = array("q")  # where each sentence's omitted words end in _omitted
        for row in rows:
            self.append(row)

    def add(self, index: int, sure: int, possible: int, predicted: int, hits_sure: int, hits_possible: int,
            selection: bool = False, omitted: Iterable[int] = ()) -> None:
        self._counts.extend((index, sure, possible, predicted, hits_sure, hits_possible, int(selection)))
        self._omitted.extend(omitted)
        self._ends.append(len(self._omitted))

    def append(self, row: Any) -> None:
        """Add a SentenceScore (or anything with its fields)."""
        self.add(row.index, row.sure, row.possible, row.predicted, row.hits_sure, row.hits_possible, row.selection,
                 row.omitted)

    def __len__(self) -> int:
        return len(self._ends)

    def _order(self) -> np.ndarray:
        index = np.frombuffer(self._counts, dtype=np.int64)[0::_FIELDS] if len(self) else np.zeros(0, np.int64)
        return np.argsort(index, kind="stable")

    def row(self, k: int) -> Any:
        """The k-th sentence added, as a SentenceScore."""
        from attention_lens.model.analysis.alignment.report import SentenceScore

        values = self._counts[k * _FIELDS:(k + 1) * _FIELDS]
        start = self._ends[k - 1] if k else 0
        return SentenceScore(*values[:6], selection=bool(values[6]),
                             omitted=tuple(self._omitted[start:self._ends[k]]))

    def __iter__(self) -> Iterator[Any]:
        """SentenceScore of every sentence, in index (line) order."""
        for k in self._order():
            yield self.row(int(k))

    def worst(self, n: int) -> list[Any]:
        """The n sentences with the highest AER among those reported (not `best`'s chosen-on ones)."""
        if not len(self):
            return []
        c = np.frombuffer(self._counts, dtype=np.int64).reshape(-1, _FIELDS)
        a, s, a_s, a_p = c[:, 3], c[:, 1], c[:, 4], c[:, 5]
        total = a + s
        aer = np.where(total > 0, 1.0 - (a_s + a_p) / np.maximum(total, 1), 0.0)
        aer = np.where(c[:, 6] == 0, aer, -np.inf)
        order = np.lexsort((c[:, 0], -aer))  # highest AER first, ties in line order
        return [self.row(int(k)) for k in order[:n] if c[k, 6] == 0]

    def counts(self) -> Counts:
        """The summed counts of every sentence held."""
        if not len(self):
            return Counts()
        c = np.frombuffer(self._counts, dtype=np.int64).reshape(-1, _FIELDS).sum(axis=0)
        return Counts(int(c[3]), int(c[1]), int(c[4]), int(c[5]))


def write_summary(summary: dict[str, Any], sentences: Iterable[Any], out: IO[str]) -> None:
    """`summary` as one JSON object on `out`, its `sentences` key written last from `sentences` (SentenceScore
    in line order), one at a time, instead of a list built first: the same text json.dumps would give for the
    whole object with that list (ensure_ascii=False)."""
    head = json.dumps({k: v for k, v in summary.items() if k != "sentences"}, ensure_ascii=False)
    out.write(head[:-1] + (', "sentences": [' if len(head) > 2 else '"sentences": ['))
    for k, row in enumerate(sentences):
        out.write((", " if k else "") + json.dumps(row.as_dict(), ensure_ascii=False))
    out.write("]}\n")


class LinkSpill:
    """Each sentence's links (a Pharaoh line) as they come, in any order, kept in a temporary file with only
    (index, offset) in memory; read back in index order to write `align --out`."""

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile("w+b")  # noqa: SIM115 -- closed by close()
        self._index = array("q")
        self._offset = array("q")
        self.last = -1  # the highest index added

    def add(self, index: int, text: str) -> None:
        self._index.append(index)
        self._offset.append(self.file.tell())
        self.file.write(text.encode("utf-8") + b"\n")
        self.last = max(self.last, index)

    def __len__(self) -> int:
        return len(self._index)

    def in_order(self) -> Iterator[tuple[int, str]]:
        """(index, links line) of every sentence added, in index order."""
        self.file.flush()
        index = np.frombuffer(self._index, dtype=np.int64) if len(self) else np.zeros(0, np.int64)
        for k in np.argsort(index, kind="stable"):
            self.file.seek(self._offset[k])
            yield self._index[k], self.file.readline().decode("utf-8").rstrip("\n")

    def close(self) -> None:
        self.file.close()
