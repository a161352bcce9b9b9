"""The `align` report: per-sentence counts (`SentenceScore`, summed into a group's `Counts`) and `Report`,
what `align` prints and its `--json` object (docs/formats.md), with the counts a merge of shards adds up."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from attention_lens.model.analysis.alignment.links import Counts, Link
from attention_lens.model.analysis.alignment.methods import HEADLESS, Method, selectors
from attention_lens.model.analysis.alignment.scoring import Tally
from attention_lens.model.analysis.alignment.words import READINGS


@dataclass(frozen=True)
class SentenceScore:
    """One scored sentence's counts under the chosen method (summable: a group's figures are from its sums)."""

    index: int
    sure: int
    possible: int
    predicted: int
    hits_sure: int
    hits_possible: int
    selection: bool = False  # `best`: one of the sentences the method was chosen on (not in the reported figures)
    omitted: tuple[int, ...] = ()  # source words omitted (breakdown.OMISSION_MASS)

    @property
    def counts(self) -> Counts:
        return Counts(self.predicted, self.sure, self.hits_sure, self.hits_possible)

    def as_dict(self) -> dict[str, Any]:
        c = self.counts
        out = {"index": self.index, "aer": c.aer, "precision": c.precision, "recall": c.recall, "sure": self.sure,
               "possible": self.possible, "predicted": self.predicted, "hits_sure": self.hits_sure,
               "hits_possible": self.hits_possible}
        if self.selection:
            out["selection"] = True
        if self.omitted:
            out["omitted"] = list(self.omitted)
        return out

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SentenceScore:
        return cls(int(d["index"]), int(d["sure"]), int(d["possible"]), int(d["predicted"]), int(d["hits_sure"]),
                   int(d["hits_possible"]), bool(d.get("selection", False)), tuple(d.get("omitted", ())))


def summed(rows: Iterable[SentenceScore]) -> Counts:
    """The counts of a group of sentences (corpus figures are always these sums, never a mean of ratios)."""
    total = Counts()
    for r in rows:
        total = total + r.counts
    return total


@dataclass
class Report:
    """Everything `align` prints: the tally on the scored sentences, the predicted links, what was skipped,
    per-sentence counts and the error breakdown of the chosen method."""

    tally: Tally | None  # every method, every sentence with gold
    links: dict[int, list[Link]]  # sentence index -> links of the chosen method (when kept)
    method: Method
    skipped: list[tuple[int, str]]
    n: int
    n_gold: int
    selection: dict[str, Any] = field(default_factory=dict)
    held_out: Tally | None = None  # `best`: the tally of the sentences the choice was NOT made on
    sentences: Iterable[SentenceScore] = field(default_factory=list)  # any order (a corpus: SentenceRows)
    analysis: dict[str, Any] = field(default_factory=dict)  # breakdown, omissions, sinks (Breakdown.summary)
    with_gold: int | None = None  # sentences of the file with gold links, scored or not (None: not known)
    pieces: dict[int, tuple[int, ...]] = field(default_factory=dict)  # with `links`: pieces per source word

    @property
    def no_metrics_note(self) -> str:
        """Why no metrics were computed: the file has no gold links, or none of its sentences with gold links
        could be aligned (every one skipped)."""
        if self.with_gold:
            return (f"none of the {self.with_gold} sentences with gold links could be scored (each was skipped: "
                    f"see `skipped`): links extracted, metrics skipped")
        return "no gold links in the file: links extracted, metrics skipped"

    @property
    def reported(self) -> Tally | None:
        """The tally the corpus figures are read from."""
        return self.held_out or self.tally

    def summary(self, sentences: bool = True) -> dict[str, Any]:
        """The docs/formats.md `align --json` object, plus `readings`, `selection`, `skipped`, `sentences`
        (left out when not `sentences`: sentences.write_summary streams them), `breakdown`, `omissions`,
        `sinks` and `merge` (the counts a merge of shards adds up)."""
        scored = self.reported
        out: dict[str, Any] = {"n": self.n, "n_scored": scored.n if scored else 0,
                               "n_gold": self.tally.n if self.tally else 0, "method": self.method.name}
        if scored is None or scored.n == 0:
            out.update(aer=None, precision=None, recall=None, heads=[], readings={}, note=self.no_metrics_note)
        else:
            out.update(scored[self.method].as_dict())
            m = self.method
            out["heads"] = [] if m.weights in HEADLESS else [
                {"layer": li, "head": hi, "aer": self.tally[Method(m.extract, m.reading, li, hi, m.threshold,
                                                                  m.weights)].aer}
                for li, hi in selectors(self.tally.layers, self.tally.heads) if hi is not None]
            out["readings"] = {}
            for reading in READINGS:
                if self.selection:  # `best`: the best method of each reading, chosen and reported as above
                    pick = self.selection["per_reading"][reading]
                    pick = Method.parse(pick) if isinstance(pick, str) else pick
                else:
                    pick = Method(m.extract, reading, m.layer, m.head, m.threshold, m.weights)
                out["readings"][reading] = {"method": pick.name, **scored[pick].as_dict()}
        if self.selection:
            out["selection"] = {k: v for k, v in self.selection.items() if k != "per_reading"}
        out["skipped"] = [{"index": i, "reason": r} for i, r in sorted(self.skipped)]
        if sentences:
            out["sentences"] = [r.as_dict() for r in sorted(self.sentences, key=lambda r: r.index)]
        out.update(self.analysis)
        out["merge"] = self.merge_counts()
        return out

    def merge_counts(self) -> dict[str, Any]:
        """What `merge` needs to add shards up exactly: every counted method's summed counts."""
        out: dict[str, Any] = {"kind": "align", "n": self.n}
        if self.with_gold is not None:
            out["with_gold"] = self.with_gold
        for name, tally in (("tally", self.tally), ("reported", self.held_out)):
            if tally is not None:
                out[name] = {"layers": tally.layers, "heads": tally.heads, "thresholds": list(tally.thresholds),
                             "weights": tally.weights, "n": tally.n, "counts": tally.counts.tolist()}
        if self.selection:
            out["selection"] = {k: (v.name if isinstance(v, Method) else v) for k, v in self.selection.items()
                                if k != "per_reading"}
            out["selection"]["per_reading"] = {r: (p.name if isinstance(p, Method) else p)
                                               for r, p in self.selection["per_reading"].items()}
        return out
