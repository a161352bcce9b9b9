"""The everyday models' training curves as one picture: validation loss and chrF against steps and minutes.

    .venv/bin/python -m reports.training_curves [--out assets/everyday-training.png]

Reads each checkpoint's train_log.csv (a continued run's log goes on from its start's steps and seconds);
validation loss is teacher-forced cross-entropy per token on 500 validation pairs, chrF is greedy decoding
of 400 validation sentences (sacrebleu).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

ROOT = Path(__file__).resolve().parent.parent
MODELS = {"everyday-en-fr": "#1f77b4", "everyday-de-en": "#d62728"}


def figure(logs: dict[str, pd.DataFrame]) -> go.Figure:
    fig = make_subplots(rows=2, cols=2, shared_xaxes="columns", horizontal_spacing=0.08, vertical_spacing=0.08,
                        subplot_titles=("validation loss against steps", "validation loss against minutes",
                                        "validation chrF against steps", "validation chrF against minutes"))
    for name, log in logs.items():
        minutes = log["seconds"] / 60
        for row, column in ((1, "valid_tf_loss"), (2, "valid_chrf")):
            for col, x in ((1, log["step"]), (2, minutes)):
                fig.add_trace(go.Scatter(x=x, y=log[column], mode="lines+markers", name=name,
                                         line={"color": MODELS[name]}, showlegend=(row, col) == (1, 1)),
                              row=row, col=col)
    fig.update_xaxes(title_text="step", row=2, col=1)
    fig.update_xaxes(title_text="minutes of training", row=2, col=2)
    fig.update_yaxes(title_text="loss (nats / token)", row=1, col=1)
    fig.update_yaxes(title_text="chrF", row=2, col=1)
    fig.update_layout(width=1100, height=700, template="plotly_white", margin={"l": 60, "r": 20, "t": 50, "b": 50},
                      legend={"orientation": "h", "y": 1.08, "x": 0.3})
    return fig


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", default=str(ROOT / "assets" / "everyday-training.png"))
    args = p.parse_args()
    logs = {name: pd.read_csv(ROOT / "checkpoints" / name / "train_log.csv") for name in MODELS}
    figure(logs).write_image(args.out)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
