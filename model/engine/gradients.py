"""What gradient saliency needs from an engine: every decoder row's logit as a differentiable function of the
token embeddings the model reads (model.engine.saliency does the rest, the same for every family).

An engine fills in `EmbeddedRun` for a run: the embeddings of the source tokens and of the decoder inputs, the
baseline (the model's padding embedding in every position), the id chosen at each row, and `logits`, the model's
own forward pass from those embeddings to the logit of row r's chosen id, for a batch in which every element
names its own row r, in the run's setting (causal or not, the same heads off). One pass thus serves points of
many rows at once. With the causal mask on, row r reads only decoder inputs 0..r, so the prefix given may stop
after the batch's last row (and whatever it holds after row r cannot change row r's logit); without it, every
row reads all m inputs.

`probabilities` (optional): the same pass ending at the softmax probability of row r's chosen id instead of its
logit (what the gradient alignment reading differentiates, model.analysis.alignment.gradient); None where a
family does not give it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class EmbeddedRun:
    """Every row of a run as a function of its embeddings (module docstring)."""
    source: torch.Tensor  # (n, d) the source tokens' embeddings (before any scaling or positions)
    target: torch.Tensor  # (m, d) the decoder inputs of the run
    source_baseline: torch.Tensor  # (n, d) the padding embedding in every source position
    target_baseline: torch.Tensor  # (m, d) the same on the target side
    chosen: tuple[int, ...]  # (m,) the id whose logit row r explains
    causal: bool  # row r read decoder inputs 0..r only
    # (B, n, d), (B, L, d), rows (B,) -> (B,): element b's logit of chosen[rows[b]] at row rows[b]; L > every
    # row with the causal mask on, L = m without it
    logits: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
    # the same arguments -> (B,): element b's softmax probability of chosen[rows[b]] at row rows[b]
    probabilities: Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor] | None = None

    def __post_init__(self) -> None:
        if self.source.shape != self.source_baseline.shape or self.target.shape != self.target_baseline.shape \
                or len(self.chosen) != self.target.shape[0]:
            raise ValueError(f"embedded run: inputs {tuple(self.source.shape)}, {tuple(self.target.shape)}, "
                             f"baselines {tuple(self.source_baseline.shape)}, {tuple(self.target_baseline.shape)} "
                             f"and {len(self.chosen)} chosen ids do not match")

    @property
    def m(self) -> int:
        return int(self.target.shape[0])

    def seen(self, t: int) -> int:
        """How many decoder inputs row t read: t + 1 with the causal mask on, m without it."""
        return t + 1 if self.causal else self.m
