"""Every decoding step of our Transformer as a function of the token embeddings it reads, for gradient saliency
(model.engine.gradients, model.engine.saliency).

The forward pass is the model's own layers in the order `Transformer.encode` / `decode` run them (embeddings
times sqrt(d_model) plus sinusoidal positions, then every layer with the run's head masks), started from
embeddings instead of ids so that gradients reach them, through the fused attention kernel (no weights are
needed here: the same scores, about a tenth faster); the output projection is applied only at the row each batch
element asks for.
"""

from __future__ import annotations

import math

import torch
from attention_lens.model.builtin.transformer import Encoded, Transformer, position_table
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.masks import causal_mask, full_mask
from attention_lens.model.engine.runs import RawRun


def embedded_run(model: Transformer, run: RawRun, chosen: list[int], causal: bool,
                 keep: dict[str, torch.Tensor | None]) -> EmbeddedRun:
    """The run's rows and their chosen ids; causal: whether row t saw only positions <= t."""
    cfg = model.cfg
    n, m = len(run.src_ids), len(run.dec_in_ids)
    scale = math.sqrt(cfg.d_model)
    device = model.src_embed.weight.device
    pe = position_table(max(n, m, cfg.max_positions), cfg.d_model).to(device=device,
                                                                        dtype=model.src_embed.weight.dtype)
    chosen_ids = torch.tensor(chosen, dtype=torch.long, device=device)

    def layer_keep(kind: str, i: int) -> torch.Tensor | None:
        return None if keep[kind] is None else keep[kind][i]

    def outputs(source: torch.Tensor, prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """source (B, n, d), prefix (B, L, d), rows (B,) -> (B, V) each element's row's logits."""
        batch, length = source.shape[0], prefix.shape[1]
        src_keep = torch.ones(batch, n, dtype=torch.bool, device=device)
        rows = rows.to(device)
        x = source * scale + pe[:n]
        for i, layer in enumerate(model.encoder):
            x, _ = layer(x, src_keep[:, None, None, :], False, layer_keep("enc", i))
        caches = model.init_caches(Encoded(x, src_keep, []))
        y = prefix * scale + pe[:length]
        self_mask = causal_mask(length, device) if causal else full_mask(length, device)
        for i, (layer, cache) in enumerate(zip(model.decoder, caches)):
            y, _, _, _ = layer(y, cache, self_mask, None, False, (layer_keep("dec", i), layer_keep("cross", i)))
        return model.generator(y[torch.arange(batch, device=device), rows])  # (B, V): only the rows asked for

    def logits(source: torch.Tensor, prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """-> (B,) each element's row's chosen logit."""
        rows = rows.to(device)
        return outputs(source, prefix, rows).gather(1, chosen_ids[rows][:, None])[:, 0]

    def probabilities(source: torch.Tensor, prefix: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """-> (B,) each element's row's softmax probability of its chosen id."""
        rows = rows.to(device)
        return outputs(source, prefix, rows).softmax(-1).gather(1, chosen_ids[rows][:, None])[:, 0]

    src_table, tgt_table = model.src_embed.weight.detach(), model.tgt_embed.weight.detach()
    return EmbeddedRun(source=src_table[run.src_ids], target=tgt_table[run.dec_in_ids],
                       source_baseline=src_table[[cfg.pad_id] * n], target_baseline=tgt_table[[cfg.pad_id] * m],
                       chosen=tuple(chosen), causal=causal, logits=logits, probabilities=probabilities)
