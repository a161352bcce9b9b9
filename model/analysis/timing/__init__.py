"""Word timings of a speech model: which cross-attention heads time its words, and how well.

Modules: `dtw` (Whisper's recipe: heads normalised, median-filtered, averaged, dynamic time warping; token times
as transformers computes them), `trace_times` (the words and times of one Trace, a pure function of its
cross-attention and a head set), `gold` (CTM, TextGrid and the list's own timings, read and checked), `words`
(tokens to words, matched to gold words by one key), `clips` (a clip list with its timings, streamed; each clip's
cross-attention from an engine), `scoring` (word-start errors as whole-millisecond histograms, the breakdown
bands), `rank` (every head, the mean of heads and a head set scored per clip; greedy head selection), `run` (a
whole run: choose on one part, report on the rest), `report` (the JSON report and the exact merge of shards),
`config` (alignment_heads written into a copy of the model's generation_config.json).
"""
