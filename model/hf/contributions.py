"""What contributions need from a Hugging Face model, computed from the model's own modules in one replay:
per head ||v_j W_O^h|| from each attention's value and output projections (Marian / BART / mBART / Pegasus /
M2M-100: v_proj, out_proj; T5 / mT5: v, o) applied to what that attention reads, and the decoder residual
stream's norm at each layer's input (the model's own hidden states).

With heads switched off (model.hf.ablation) the replay runs under the same ablation (the caller's
`ablating` block) and a switched-off head sends nothing: its norms are 0, as in our own engine.
"""

from __future__ import annotations

from typing import Any

import torch
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.heads import KIND_CODES, head_output_norms
from attention_lens.model.engine.masks import full_mask
from attention_lens.model.engine.runs import ContributionParts, RawRun
from attention_lens.model.engine.tensors import to_numpy
from attention_lens.model.hf.probes import additive_mask

POST_LN = ("marian", "bart")  # the attention reads the residual stream itself
PRE_LN = ("mbart", "pegasus", "m2m_100", "whisper")  # the attention reads its LayerNorm of the residual stream
T5_LIKE = ("t5", "mt5")


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
def contribution_parts(model: Any, run: RawRun, causal: bool,
                       keep: dict[str, torch.Tensor | None] | None = None) -> ContributionParts:
    """Replay the run (its source and the decoder inputs it read) in one pass; with heads off (keep: the head
    masks of model.engine.heads.keep_masks), the caller runs this inside `ablating` with the same masks."""
    src, dec = torch.tensor([run.src_ids], device=model.device), torch.tensor([run.dec_in_ids], device=model.device)
    extra = {} if causal else {"decoder_attention_mask": additive_mask(full_mask(dec.shape[1], model.device),
                                                                       model.dtype)}
    out = model(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=dec, use_cache=False,
                output_hidden_states=True, **extra)
    return parts_of(model, out, keep)


@torch.no_grad()
def parts_of(model: Any, out: Any, keep: dict[str, torch.Tensor | None] | None = None, row: int = 0,
             n: int | None = None, m: int | None = None) -> ContributionParts:
    """The parts of sentence `row` of a pass that returned its hidden states (output_hidden_states=True), its
    first n source and m decoder positions (None: all; the rest is a padded batch's padding); keep: the head
    masks the pass ran with (None: every head on), a switched-off head's norms set to 0."""
    sites = attention_sites(model)
    enc_in = [h[row, :n] for h in out.encoder_hidden_states]  # embeddings, then each layer's output
    dec_in = [h[row, :m] for h in out.decoder_hidden_states]
    memory = out.encoder_last_hidden_state[row, :n]

    stack = torch.stack
    norms = {"encoder_self_attention": stack([value_output_norms(s, enc_in[i])
                                              for i, s in enumerate(sites["encoder_self_attention"])]),
             "decoder_self_attention": stack([value_output_norms(s, dec_in[i])
                                              for i, s in enumerate(sites["decoder_self_attention"])]),
             "cross_attention": stack([value_output_norms(s, memory) for s in sites["cross_attention"]])}
    for kind, mask in (keep or {}).items():  # (layers, h) 0.0 for a head off: it sends nothing
        if mask is not None:
            norms[KIND_CODES[kind]] = norms[KIND_CODES[kind]] * mask.to(memory.dtype)[:, :, None]
    return ContributionParts(
        value_norms={kind: to_numpy(n) for kind, n in norms.items()},
        residual_norms=to_numpy(stack([dec_in[i].norm(dim=-1) for i in range(len(sites["cross_attention"]))])))
