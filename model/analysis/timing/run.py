"""A timing run: a clip list with gold timings through a speech engine, every head ranked, a head set chosen or
given, reported (what `align --audio-data` and `attention_lens.load(M).rank_alignment_heads` call).

Which clips choose and which report: with `heads` given, every clip reports; with a `select_on` list, the set is
chosen on it and every clip of the data reports; otherwise the first half of the list's clips choose and the
second half reports (a sharded run needs one of the first two, so that every shard scores the same set). Clips
go through the engine `batch_size` at a time and only the selection part is held (its head matrices); the rest
is counted as it comes.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from attention_lens.model.analysis.timing.clips import (
    ClipLine,
    Timings,
    clip_attention,
    count_clips,
    read_clip_list,
    survey,
    token_row_start,
)
from attention_lens.model.analysis.timing.dtw import FILTER_WIDTH
from attention_lens.model.analysis.timing.rank import ClipAttention, Head, Ranking, choose_heads
from attention_lens.model.analysis.timing.report import report
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.stream import Shard

BATCH = 2  # clips per teacher-forced pass (Whisper's encoder attention alone is 1,500 x 1,500 per head and layer)


def parse_heads(text: str, layers: int | None = None, heads: int | None = None) -> list[Head]:
    """"L:H,L:H" (0-based, as generation_config.alignment_heads) -> [(L, H), ...]; ValueError, one line."""
    out = []
    for part in text.split(","):
        layer, sep, head = part.strip().partition(":")
        if not (sep and layer.strip().isdigit() and head.strip().isdigit()):
            raise ValueError(f"--alignment-heads is LAYER:HEAD,... 0-based (e.g. 2:3,3:1), not {text!r}")
        pair = (int(layer), int(head))
        if layers is not None and heads is not None and not (pair[0] < layers and pair[1] < heads):
            raise ValueError(f"--alignment-heads {part.strip()}: this model has {layers} decoder layers x {heads} "
                             f"heads (0-based)")
        out.append(pair)
    if len(set(out)) != len(out):
        raise ValueError(f"--alignment-heads names a head twice: {text!r}")
    return out


def _batched(lines: Iterable[ClipLine], size: int) -> Iterator[list[ClipLine]]:
    batch: list[ClipLine] = []
    for line in lines:
        batch.append(line)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _bar(total: int, desc: str, progress: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, desc=desc, unit="clip", disable=not progress, file=sys.stderr, leave=False)


def rank_clips(engine: Any, audio_data: str, timings: str | None = None, *, heads: Sequence[Head] | None = None,
               select_on: str | None = None, shard: Shard = Shard(), batch_size: int = BATCH, options: Any = None,
               width: int = FILTER_WIDTH, progress: bool = False, model_name: str | None = None,
               token_rows: str = "reading") -> dict[str, Any]:
    """The report (model.analysis.timing.report) of a timing run over `audio_data` (module docstring)."""
    from attention_lens.model.engine.options import DecodeOptions

    if engine.source_kind != "audio":
        raise ModelInputError(f"{engine.name} reads text: --audio-data needs a speech model (a Whisper folder)")
    options = options or DecodeOptions()
    token_row_start(0, token_rows)  # a wrong name is refused before any clip runs
    layers, n_heads = engine.n_decoder_layers, engine.n_heads
    given = [tuple(h) for h in heads] if heads else None
    if given:
        Ranking(layers, n_heads, tuple(given))  # refuses a head outside the model before any clip runs
    if shard.count > 1 and given is None and select_on is None:
        raise ValueError("--shard without --alignment-heads needs --select-on FILE (every shard must score the same "
                         "heads)")
    gold = Timings(timings)
    n_data, frequencies = survey(audio_data, gold, also=select_on)

    def attention(lines: Iterable[ClipLine], total: int, desc: str) -> Iterator[list[ClipAttention]]:
        with _bar(total, desc, progress) as bar:
            for batch in _batched(lines, batch_size):
                yield clip_attention(engine, batch, options, frequencies, token_rows)
                bar.update(len(batch))

    steps: list[dict[str, Any]] = []
    if given is not None:
        chosen, selection = given, {"source": "given", "chosen_on": 0}
        reported_lines: Iterable[ClipLine] = read_clip_list(audio_data, gold, shard)
        n_report = shard.share(n_data) if shard.count > 1 else n_data
    else:
        if select_on is not None:
            select_lines: Iterable[ClipLine] = read_clip_list(select_on, gold)
            reported_lines = read_clip_list(audio_data, gold, shard)
            source, n_choose, n_report = os.path.basename(select_on), count_clips(select_on, gold), n_data
        else:
            half = n_data // 2
            if half < 1:
                raise ValueError("choosing heads on the first half of the list needs at least 2 clips; give "
                                 "--alignment-heads or --select-on FILE")
            every = list(read_clip_list(audio_data, gold))
            select_lines, reported_lines = every[:half], every[half:]
            source, n_choose, n_report = "first half", half, n_data - half
        held = [c for batch in attention(select_lines, n_choose, "choosing heads") for c in batch]
        found, steps = choose_heads(held, layers, n_heads, width)
        del held
        chosen = found
        selection = {"source": source, "chosen_on": n_choose, "steps": steps}
    ranking = Ranking(layers, n_heads, tuple(chosen), width)
    for batch in attention(reported_lines, n_report, "ranking heads"):
        ranking.add(batch)
    selection["reported_on"] = len(ranking.clips)
    merge = {"model": model_name or engine.name, "shard": str(shard), "timings": os.path.basename(timings or "")
             or "the list's third column", "median_filter_width": width, "token_rows": token_rows}
    return report(ranking, selection, merge)

