"""The logit lens on our Transformer's decoder: every decoder layer's output through the output projection.

The model is post-LN (model.builtin.transformer): each decoder layer ends with its own LayerNorm and there is no
separate final norm, so the model itself turns the last layer's output into logits with `generator` alone;
the lens applies that same `generator` to each earlier layer's output (nostalgebraist 2020, "interpreting GPT:
the logit lens").
"""

from __future__ import annotations

import torch
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.runs import RawRun
from attention_lens.model.engine.tensors import pad_batch


@torch.no_grad()
def layer_logits(model: Transformer, run: RawRun, causal: bool,
                 keep: dict[str, torch.Tensor | None]) -> torch.Tensor:
    """Replay the run (its source and the decoder inputs it read) in one pass as teacher forcing does it
    (model.builtin.batch) -> (L_dec, m, V): row l is layer l+1's output through `generator`; the last row is the
    pass's own logits. keep: the head masks of the run (model.engine.heads.keep_masks)."""
    device = model.src_embed.weight.device
    src, src_keep = (t.to(device) for t in pad_batch([run.src_ids], model.cfg.pad_id))
    dec = torch.tensor([run.dec_in_ids], device=device)
    tgt_keep = torch.ones_like(dec, dtype=torch.bool)
    enc = model.encode(src, src_keep, True, keep["enc"])
    out = model.decode(dec, enc, decoder_self_mask(tgt_keep, causal), need_weights=True,
                       keep=(keep["dec"], keep["cross"]))
    # out.inputs[l] is what layer l read: layer l-1's output, for l >= 1.
    return torch.stack([model.generator(y[0]) for y in out.inputs[1:]] + [out.logits[0]])
