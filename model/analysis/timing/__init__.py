"""Word timings of a speech model: which cross-attention heads time its words, and how well.

Modules: `dtw` (Whisper's recipe: heads normalised, median-filtered, averaged, dynamic time warping; token times
as transformers computes them).
"""
