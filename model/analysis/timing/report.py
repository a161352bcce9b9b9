"""The `align --audio-data` report: every head's figures best first, the mean of all heads, the reported head set
(`alignment_heads`), its breakdown, the clips worst first; and the exact merge of shards' reports.

The `merge` object carries the counts (every histogram) from which every figure is recomputed, so the reports of
`--shard K/N` runs add up to one run's (`merge_reports`, the `merge` command's "align-audio" kind).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from attention_lens.model.analysis.timing.rank import Ranking, all_heads
from attention_lens.model.analysis.timing.scoring import Bands, Histogram

KIND = "align-audio"


def _head_order(row: dict[str, Any]) -> tuple:
    """Best first: the lowest median error, then the most within 100 ms, then the lowest mean (no words: last)."""
    if row["median_start_error_ms"] is None:
        return (1, 0.0, 0.0, 0.0)
    return (0, row["median_start_error_ms"], -row["within_100ms"], row["mean_start_error_ms"])


def build(per_head: Sequence[Histogram], mean_of_heads: Histogram, reported: Histogram, bands: Bands,
          clips: list[dict[str, Any]], layers: int, heads: int, chosen: Sequence[Sequence[int]],
          selection: dict[str, Any], merge: dict[str, Any]) -> dict[str, Any]:
    """The report from its counts (one run's or the sum of shards')."""
    rows = [{"layer": layer, "head": head, **h.figures()}
            for (layer, head), h in zip(all_heads(layers, heads), per_head, strict=True)]
    rows.sort(key=_head_order)
    out: dict[str, Any] = {
        "n_clips": len(clips),
        **reported.figures(),
        "alignment_heads": [list(map(int, h)) for h in chosen],
        "heads_note": "layer and head 0-based, as generation_config.alignment_heads writes them",
        "heads": rows,
        "best_head": rows[0] if rows else None,
        "mean_of_heads": mean_of_heads.figures(),
        "selection": selection,
        "breakdown": bands.to_json(),
        "clips": sorted(clips, key=lambda c: (-(c["mean_start_error_ms"] or 0.0), c["index"])),
    }
    out["merge"] = {**merge, "kind": KIND, "layers": layers, "heads": heads,
                    "per_head": [h.to_json() for h in per_head], "mean_of_heads": mean_of_heads.to_json(),
                    "reported": reported.to_json()}
    return out


def report(ranking: Ranking, selection: dict[str, Any], merge: dict[str, Any]) -> dict[str, Any]:
    """One run's report."""
    return build(ranking.per_head, ranking.mean_of_heads, ranking.reported, ranking.bands, ranking.clips,
                 ranking.layers, ranking.heads, ranking.chosen, selection, merge)


def merge_reports(parts: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """The reports of a file's shards (the same model, timings and head set) as one run's; ValueError, one line,
    for reports that cannot be added up."""
    if not parts:
        raise ValueError("nothing to merge")
    tags = [p.get("merge") for p in parts]
    if not all(isinstance(t, dict) and t.get("kind") == KIND for t in tags):
        raise ValueError("every file must be the --json output of align --audio-data (with its 'merge' counts)")
    shapes = {(t["layers"], t["heads"]) for t in tags}
    if len(shapes) != 1:
        raise ValueError("the shards come from models of different sizes")
    if len({t.get("token_rows", "reading") for t in tags}) != 1:
        raise ValueError("the shards timed tokens by different rows (--token-rows); give every shard the same one")
    sets = {tuple(map(tuple, p["alignment_heads"])) for p in parts}
    if len(sets) != 1:
        raise ValueError("the shards scored different head sets; give every shard the same --alignment-heads or "
                         "--select-on")
    if any(p["selection"].get("source") == "first half" for p in parts):
        raise ValueError("a run that chose its heads on its own first half cannot be added up; use "
                         "--alignment-heads or --select-on FILE")
    layers, heads = shapes.pop()
    per_head = [Histogram() for _ in range(layers * heads)]
    mean_of_heads, reported, bands = Histogram(), Histogram(), Bands()
    for p in parts:
        t = p["merge"]
        per_head = [a.merged(Histogram.from_json(b)) for a, b in zip(per_head, t["per_head"], strict=True)]
        mean_of_heads = mean_of_heads.merged(Histogram.from_json(t["mean_of_heads"]))
        reported = reported.merged(Histogram.from_json(t["reported"]))
        bands = bands.merged(Bands.from_json(p["breakdown"]))
    clips = [c for p in parts for c in p["clips"]]
    selection = dict(parts[0]["selection"])
    selection["reported_on"] = len(clips)
    merge = {k: v for k, v in tags[0].items() if k not in ("per_head", "mean_of_heads", "reported", "shard")}
    return build(per_head, mean_of_heads, reported, bands, clips, layers, heads, parts[0]["alignment_heads"],
                 selection, merge)
