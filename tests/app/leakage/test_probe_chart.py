"""The causality probe's chart writes "leak threshold" beside its dashed line in the right margin, never over
a bar (with the mask off every bar rises past the line, and the label sat over the last one)."""

from __future__ import annotations

import math

from attention_lens.app.render.leakage import probe_bars


def test_the_threshold_label_is_outside_the_bars_at_the_line():
    fig = probe_bars(["▁le", "▁chat", "▁dort", "</s>"], [0.5, 2.0, 3.0, 4.0], 1e-4)
    labels = [a for a in fig.layout.annotations if "threshold" in a.text]
    assert len(labels) == 1
    label = labels[0]
    assert label.xref == "paper" and label.x >= 1 and label.xanchor == "left"  # right of the plot area
    assert label.yref == "y" and math.isclose(label.y, math.log10(1e-4))  # at the line's height (log axis)
    assert fig.layout.margin.r >= 70  # room for it
