"""One decoding step of our Transformer as a function of the token embeddings it reads, for gradient saliency
(model.engine.gradients, model.engine.saliency).

The forward pass is the model's own layers in the order `Transformer.encode` / `decode` run them (embeddings
times sqrt(d_model) plus sinusoidal positions, then every layer with the run's head masks), started from
embeddings instead of ids so that gradients reach them.
"""

from __future__ import annotations

import math

import torch

from model.builtin.transformer import Encoded, Transformer, position_table
from model.engine.gradients import EmbeddedStep
from model.engine.masks import causal_mask, full_mask
from model.engine.runs import RawRun


def embedded_step(model: Transformer, run: RawRun, t: int, chosen: int, causal: bool,
                  keep: dict[str, torch.Tensor | None]) -> EmbeddedStep:
    """Row t of the run and its chosen id; causal: whether row t saw only positions <= t."""
    cfg = model.cfg
    dec_ids = run.dec_in_ids[: t + 1] if causal else run.dec_in_ids
    n, length = len(run.src_ids), len(dec_ids)
    scale = math.sqrt(cfg.d_model)
    pe = position_table(max(n, length, cfg.max_positions), cfg.d_model)
    self_mask = causal_mask(length) if causal else full_mask(length)

    def layer_keep(kind: str, i: int) -> torch.Tensor | None:
        return None if keep[kind] is None else keep[kind][i]

    def logit(source: torch.Tensor, prefix: torch.Tensor) -> torch.Tensor:
        """source (B, n, d), prefix (B, T, d) -> (B,) the chosen id's logit at row t."""
        batch = source.shape[0]
        src_keep = torch.ones(batch, n, dtype=torch.bool)
        x = source * scale + pe[:n]
        for i, layer in enumerate(model.encoder):
            x, _ = layer(x, src_keep[:, None, None, :], True, layer_keep("enc", i))
        caches = model.init_caches(Encoded(x, src_keep, []))
        y = prefix * scale + pe[:length]
        for i, (layer, cache) in enumerate(zip(model.decoder, caches)):
            y, _, _, _ = layer(y, cache, self_mask, None, True, (layer_keep("dec", i), layer_keep("cross", i)))
        return model.generator(y[:, t])[:, chosen]

    src_table, tgt_table = model.src_embed.weight.detach(), model.tgt_embed.weight.detach()
    return EmbeddedStep(source=src_table[run.src_ids], prefix=tgt_table[dec_ids],
                        source_baseline=src_table[[cfg.pad_id] * n], prefix_baseline=tgt_table[[cfg.pad_id] * length],
                        logit=logit)
