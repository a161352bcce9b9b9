"""What contributions need from a Hugging Face model, computed from the model's own modules in one replay:
per head ||v_j W_O^h|| from each attention's value and output projections (Marian / BART / mBART / Pegasus /
M2M-100: v_proj, out_proj; T5 / mT5: v, o) applied to what that attention reads, and the decoder residual
stream's norm at each layer's input (the model's own hidden states).

Head ablation: transformers 5.x no longer takes head_mask / decoder_head_mask / cross_attn_head_mask for these
families, and doing it another way would mean changing the shared model's modules; the adapter refuses it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from model.engine.decode import to_numpy
from model.engine.errors import ModelInputError
from model.engine.heads import head_output_norms
from model.engine.masks import full_mask
from model.engine.runs import ContributionParts, DecodeOptions, RawRun
from model.hf.probes import additive_mask

POST_LN = ("marian", "bart")  # the attention reads the residual stream itself
PRE_LN = ("mbart", "pegasus", "m2m_100")  # the attention reads its LayerNorm of the residual stream
T5_LIKE = ("t5", "mt5")
ABLATION_NOTE = ("Switching heads off is not available for Hugging Face models: transformers 5.x removed "
                 "head_mask / decoder_head_mask / cross_attn_head_mask for these families, and the adapter "
                 "never changes the loaded model. Use one of this project's own models.")


def refuse_ablation(options: DecodeOptions) -> None:
    if options.ablate:
        raise ModelInputError(ABLATION_NOTE)


def attention_sites(model: Any) -> dict[str, list[tuple[Any, Any, Any, int]]]:
    """kind -> per layer (value projection, output projection, LayerNorm applied before it or None, heads)."""
    family = str(model.config.model_type)
    if family in T5_LIKE:
        def t5(block: Any, i: int, norm: bool) -> tuple:
            sub = block.layer[i]
            attn = sub.SelfAttention if i == 0 else sub.EncDecAttention
            return attn.v, attn.o, sub.layer_norm if norm else None, attn.n_heads
        return {"encoder_self_attention": [t5(b, 0, True) for b in model.encoder.block],
                "decoder_self_attention": [t5(b, 0, True) for b in model.decoder.block],
                "cross_attention": [t5(b, 1, False) for b in model.decoder.block]}
    if family in POST_LN + PRE_LN:
        pre = family in PRE_LN
        enc, dec = model.model.encoder.layers, model.model.decoder.layers

        def bart(attn: Any, norm: Any) -> tuple:
            return attn.v_proj, attn.out_proj, norm, attn.num_heads
        return {"encoder_self_attention": [bart(la.self_attn, la.self_attn_layer_norm if pre else None) for la in enc],
                "decoder_self_attention": [bart(la.self_attn, la.self_attn_layer_norm if pre else None) for la in dec],
                "cross_attention": [bart(la.encoder_attn, None) for la in dec]}
    raise ModelInputError(f"contributions are not available for {family} models (known: "
                          f"{', '.join(T5_LIKE + POST_LN + PRE_LN)})")


def value_output_norms(site: tuple[Any, Any, Any, int], x: torch.Tensor) -> torch.Tensor:
    """x (n, d_model) what the attention's keys read (before its LayerNorm, if any) -> (h, n)."""
    v_proj, o_proj, norm, heads = site
    v = v_proj(norm(x) if norm is not None else x)  # (n, h * d_k)
    v = v.view(v.shape[0], heads, -1).transpose(0, 1)[None]  # (1, h, n, d_k)
    return head_output_norms(v, o_proj.weight, heads)[0]


@torch.no_grad()
def contribution_parts(model: Any, run: RawRun, causal: bool) -> ContributionParts:
    """Replay the run (its source and the decoder inputs it read) in one pass."""
    src, dec = torch.tensor([run.src_ids]), torch.tensor([run.dec_in_ids])
    extra = {} if causal else {"decoder_attention_mask": additive_mask(full_mask(dec.shape[1]), model.dtype)}
    out = model(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=dec, use_cache=False,
                output_hidden_states=True, **extra)
    return parts_of(model, out)


@torch.no_grad()
def parts_of(model: Any, out: Any) -> ContributionParts:
    """The parts of a one-sentence pass that returned its hidden states (output_hidden_states=True)."""
    sites = attention_sites(model)
    enc_in, dec_in = out.encoder_hidden_states, out.decoder_hidden_states  # embeddings, then each layer's output
    memory = out.encoder_last_hidden_state[0]

    def stack(rows: list[torch.Tensor]) -> np.ndarray:
        return to_numpy(torch.stack(rows))
    return ContributionParts(
        value_norms={
            "encoder_self_attention": stack([value_output_norms(s, enc_in[i][0])
                                             for i, s in enumerate(sites["encoder_self_attention"])]),
            "decoder_self_attention": stack([value_output_norms(s, dec_in[i][0])
                                             for i, s in enumerate(sites["decoder_self_attention"])]),
            "cross_attention": stack([value_output_norms(s, memory) for s in sites["cross_attention"]])},
        residual_norms=stack([dec_in[i][0].norm(dim=-1) for i in range(len(sites["cross_attention"]))]))
