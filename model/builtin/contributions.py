"""What contributions need from our Transformer, computed in one parallel replay of a run: the norm of what
each key sends through each head (||v_j W_O^h||) and the norm of the decoder residual stream per layer."""

from __future__ import annotations

import numpy as np
import torch
from attention_lens.model.builtin.transformer import DecoderOutput, Encoded, Transformer
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.runs import ContributionParts, RawRun
from attention_lens.model.engine.tensors import to_numpy


def _masked(norms: list[torch.Tensor], keep: torch.Tensor | None) -> np.ndarray:
    """Per-layer (B, h, keys) norms -> (layers, B, h, keys); a switched-off head sends nothing."""
    stacked = torch.stack(norms)
    return to_numpy(stacked if keep is None else stacked * keep[:, None, :, None])


def batch_parts(model: Transformer, enc: Encoded, out: DecoderOutput,
                keep: dict[str, torch.Tensor | None]) -> list[tuple[np.ndarray, ...]]:
    """The parts of a whole (padded) batch of a pass that kept its layer inputs, computed at once:
    [encoder, decoder, cross norms (layers, B, h, keys), residual norms (layers, B, m)]."""
    return [_masked([la.self_attn.value_output_norms(x) for la, x in zip(model.encoder, enc.inputs)], keep["enc"]),
            _masked([la.self_attn.value_output_norms(y) for la, y in zip(model.decoder, out.inputs)], keep["dec"]),
            _masked([la.cross_attn.value_output_norms(enc.memory) for la in model.decoder], keep["cross"]),
            to_numpy(torch.stack([y.norm(dim=-1) for y in out.inputs]))]


def row_parts(parts: list[np.ndarray], b: int, n: int, m: int) -> ContributionParts:
    """Row b (n source, m target positions) of batch_parts."""
    enc, dec, cross, resid = parts
    return ContributionParts(value_norms={"encoder_self_attention": enc[:, b, :, :n].copy(),
                                          "decoder_self_attention": dec[:, b, :, :m].copy(),
                                          "cross_attention": cross[:, b, :, :n].copy()},
                             residual_norms=resid[:, b, :m].copy())


def parts_of(model: Transformer, enc: Encoded, out: DecoderOutput, keep: dict[str, torch.Tensor | None], b: int,
             n: int, m: int) -> ContributionParts:
    """Row b (n source, m target positions) of a pass that kept its layer inputs (encode / decode)."""
    return row_parts(batch_parts(model, enc, out, keep), b, n, m)


@torch.no_grad()
def contribution_parts(model: Transformer, run: RawRun, causal: bool,
                       keep: dict[str, torch.Tensor | None]) -> ContributionParts:
    """Replay the run (its source, the decoder inputs it read, the same head masks) in one pass."""
    device = model.src_embed.weight.device
    src = torch.tensor([run.src_ids], device=device)
    dec = torch.tensor([run.dec_in_ids], device=device)
    enc = model.encode(src, torch.ones_like(src, dtype=torch.bool), False, keep["enc"])
    out = model.decode(dec, enc, decoder_self_mask(torch.ones_like(dec, dtype=torch.bool), causal),
                       need_weights=False, keep=(keep["dec"], keep["cross"]))
    return parts_of(model, enc, out, keep, 0, src.shape[1], dec.shape[1])
