"""What gradient saliency needs from an engine: one step's logit as a differentiable function of the token
embeddings the model reads (model.engine.saliency does the rest, the same for every family).

An engine fills in `EmbeddedStep` for decoder row t of a run: the embeddings of the source tokens and of the
decoder inputs row t could see, the baseline (the model's padding embedding in every position), and `logit`,
the model's own forward pass from those embeddings to the logit of the chosen token at row t, in the run's
setting (causal or not, the same heads off).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class EmbeddedStep:
    source: torch.Tensor  # (n, d) the source tokens' embeddings (before any scaling or positions)
    prefix: torch.Tensor  # (T, d) the decoder inputs row t could see (T = t + 1 with the causal mask on)
    source_baseline: torch.Tensor  # (n, d) the padding embedding in every source position
    prefix_baseline: torch.Tensor  # (T, d) the same on the target side
    # (B, n, d), (B, T, d) -> (B,): the chosen token's logit at row t, the model's forward pass from embeddings
    logit: Callable[[torch.Tensor, torch.Tensor], torch.Tensor]

    def __post_init__(self) -> None:
        if self.source.shape != self.source_baseline.shape or self.prefix.shape != self.prefix_baseline.shape:
            raise ValueError(f"embedded step: inputs {tuple(self.source.shape)}, {tuple(self.prefix.shape)} and "
                             f"baselines {tuple(self.source_baseline.shape)}, {tuple(self.prefix_baseline.shape)} "
                             f"differ in shape")
