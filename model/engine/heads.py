"""Heads named as a person reads them, `KIND:LAYER:HEAD` (1-based; `*` for every layer or head), and the head
masks that switch them off (ablation: the head's output is set to zero before W_O)."""

from __future__ import annotations

import torch
from attention_lens.model.engine.errors import ModelInputError

# The kind codes of head names and links, in the order heads are listed: code -> the Trace's attention kind.
KIND_CODES = {"enc": "encoder_self_attention", "dec": "decoder_self_attention", "cross": "cross_attention"}
CODE_OF = {kind: code for code, kind in KIND_CODES.items()}


def layers_of(n_encoder_layers: int, n_decoder_layers: int) -> dict[str, int]:
    """Kind code -> how many layers of that kind the model has (cross-attention sits in the decoder layers)."""
    return {"enc": n_encoder_layers, "dec": n_decoder_layers, "cross": n_decoder_layers}


def every_head(n_encoder_layers: int, n_decoder_layers: int, n_heads: int) -> list[tuple[str, int, int]]:
    """(kind code, layer, head) of every head, 1-based, in the order of KIND_CODES, then layer, then head."""
    layers = layers_of(n_encoder_layers, n_decoder_layers)
    return [(k, la, h) for k in KIND_CODES for la in range(1, layers[k] + 1) for h in range(1, n_heads + 1)]


def check_spec(spec: str) -> None:
    """Raise ValueError unless spec reads KIND:LAYER:HEAD with KIND enc|dec|cross and LAYER, HEAD >= 1 or *."""
    parts = spec.split(":")
    ok = len(parts) == 3 and parts[0] in KIND_CODES and all(p == "*" or (p.isdigit() and int(p) >= 1)
                                                             for p in parts[1:])
    if not ok:
        raise ValueError(f"a head is KIND:LAYER:HEAD (KIND enc|dec|cross, LAYER and HEAD from 1, or *), "
                         f"not {spec!r}")


def expand(specs: tuple[str, ...], n_encoder_layers: int, n_decoder_layers: int, n_heads: int) -> tuple[str, ...]:
    """Every head the specs name, as explicit `kind:layer:head` strings in a fixed order (kind, layer, head).
    A layer or head past the model's raises ModelInputError."""
    layers = layers_of(n_encoder_layers, n_decoder_layers)
    named = set()
    for spec in specs:
        check_spec(spec)
        kind, layer, head = spec.split(":")
        for name, value, top in (("layer", layer, layers[kind]), ("head", head, n_heads)):
            if value != "*" and int(value) > top:
                raise ModelInputError(f"{spec}: this model has {top} {kind} {name}s")
        ls = range(1, layers[kind] + 1) if layer == "*" else [int(layer)]
        hs = range(1, n_heads + 1) if head == "*" else [int(head)]
        named |= {(kind, la, he) for la in ls for he in hs}
    order = list(KIND_CODES)
    return tuple(f"{k}:{la}:{he}" for k, la, he in sorted(named, key=lambda x: (order.index(x[0]), x[1], x[2])))


def keep_masks(specs: tuple[str, ...], n_encoder_layers: int, n_decoder_layers: int,
               n_heads: int) -> dict[str, torch.Tensor | None]:
    """kind code -> (layers, heads) float tensor, 0.0 for a switched-off head and 1.0 elsewhere; None for a
    kind with no head off (so that a run without ablation computes exactly what it always did)."""
    layers = layers_of(n_encoder_layers, n_decoder_layers)
    masks: dict[str, torch.Tensor | None] = dict.fromkeys(KIND_CODES)
    for name in expand(specs, n_encoder_layers, n_decoder_layers, n_heads):
        kind, layer, head = name.split(":")
        if masks[kind] is None:
            masks[kind] = torch.ones(layers[kind], n_heads)
        masks[kind][int(layer) - 1, int(head) - 1] = 0.0
    return masks


def head_output_norms(v: torch.Tensor, w_o: torch.Tensor, h: int) -> torch.Tensor:
    """v: (B, h, Tk, d_k) values; w_o: (d_model, h * d_k) the output projection's weight -> (B, h, Tk), the
    norm of what key j sends through head h, ||v_j W_O^h|| (Kobayashi et al. 2020; W_O's bias belongs to no
    key and is left out)."""
    d_k = v.shape[-1]
    per_head = w_o.reshape(w_o.shape[0], h, d_k).permute(1, 2, 0)  # (h, d_k, d_model)
    return (v @ per_head[None]).norm(dim=-1)
