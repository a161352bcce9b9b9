"""What a loaded Hugging Face model can show, found by running it: its layer and head counts (read off the
attentions it returns), and whether a custom decoder mask is honoured (the causal switch)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from attention_lens.model.engine.errors import CheckpointError
from attention_lens.model.engine.masks import causal_mask
from transformers.modeling_outputs import BaseModelOutput

SHIFT_NOTE = "Without the shift the decoder reads the labels themselves (decoder_input_ids = labels)."


def additive_mask(allowed: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Boolean mask (True = may attend) -> the additive float mask eager attention adds to its scores
    (0 where allowed, the dtype's minimum where not). Hugging Face's mask helpers pass a 4-D mask through
    unchanged (`masking_utils._preprocess_mask_arguments`), so this is how a custom mask reaches the model."""
    return torch.zeros(allowed.shape, dtype=dtype, device=allowed.device).masked_fill(~allowed, torch.finfo(dtype).min)


def forward(model: Any, src: torch.Tensor, dec: torch.Tensor, allowed: torch.Tensor | None,
            hidden: bool = False, src_keep: torch.Tensor | None = None, weights: bool = True,
            encoder_outputs: Any = None) -> Any:
    """One full pass with every attention (unless not `weights`) and every layer's hidden states if `hidden`.
    src (B, n) token ids, or a speech model's input features (B, n_mels, frames) (floats: Whisper's
    `input_features`, which take no mask); dec (B, m); allowed: None (the model's own causal mask) or bool
    (B, 1, m, m); src_keep: (B, n) 1 for real source tokens, 0 for padding (None: all real); encoder_outputs: an
    earlier pass's encoder output to reuse instead of running the encoder again (then no encoder attentions)."""
    extra = {}
    device = model.device
    if allowed is not None:
        extra["decoder_attention_mask"] = additive_mask(allowed, model.dtype).to(device)
    src, dec = src.to(device), dec.to(device)
    if encoder_outputs is not None:
        extra["encoder_outputs"] = encoder_outputs
    elif src.is_floating_point():
        extra["input_features"] = src.to(model.dtype)
    else:
        extra["input_ids"] = src
    if not src.is_floating_point():
        extra["attention_mask"] = torch.ones_like(src) if src_keep is None else src_keep.to(device)
    with torch.no_grad():
        return model(decoder_input_ids=dec, output_attentions=weights, output_hidden_states=hidden, use_cache=False,
                     **extra)


@dataclass(frozen=True)
class Structure:
    n_encoder_layers: int
    n_decoder_layers: int
    n_heads: int
    supports_causal_switch: bool
    switch_notes: dict[str, str]


def probe_structure(model: Any, name: str, start_id: int, eos_id: int, features: torch.Tensor | None = None
                    ) -> Structure:
    """One tiny forward pass: read the layer and head counts from the attentions the model returns, and
    check whether a custom 4-D decoder mask is honoured (the causal switch). features: a speech model's input
    features (1, n_mels, frames) to run on (its window of silence), instead of two token ids."""
    family = str(model.config.model_type)
    src = torch.tensor([[eos_id, eos_id]]) if features is None else features
    dec = torch.tensor([[start_id, eos_id, eos_id, eos_id]])
    try:
        out = forward(model, src, dec, None)
    except Exception as exc:  # any family-specific failure means we cannot trace this model
        raise CheckpointError(f"{name}: a test forward pass failed ({type(exc).__name__}: {exc})") from exc
    kinds = {"encoder": out.encoder_attentions, "decoder": out.decoder_attentions, "cross": out.cross_attentions}
    absent = [k for k, v in kinds.items() if not v or any(a is None for a in v)]
    if absent:
        raise CheckpointError(f"{name}: this {family} implementation returns no "
                              f"{' / '.join(absent)} attention weights, so there is nothing to trace")
    n, m = src.shape[1] if features is None else out.encoder_last_hidden_state.shape[1], dec.shape[1]
    expected = {"encoder": (n, n), "decoder": (m, m), "cross": (m, n)}
    for kind, arrays in kinds.items():
        shapes = {tuple(a.shape[2:]) for a in arrays}
        if shapes != {expected[kind]}:
            raise CheckpointError(
                f"{name}: this {family} implementation returns {kind} attention shaped "
                f"{sorted(shapes)} for {n} source and {m} target tokens, not one (queries, keys) matrix per "
                f"head (e.g. local / n-gram-stream attention), so it cannot be traced")
    heads = {a.shape[1] for v in kinds.values() for a in v}
    if len(heads) != 1:
        raise CheckpointError(f"{name}: encoder and decoder have different head counts {sorted(heads)}; "
                              f"a trace needs one head count")
    causal, note = check_causal_switch(model, src, dec, out)
    return Structure(len(out.encoder_attentions), len(out.decoder_attentions), heads.pop(), causal,
                     {"shift": SHIFT_NOTE, "causal": note})


def check_causal_switch(model: Any, src: torch.Tensor, dec: torch.Tensor, default: Any) -> tuple[bool, str]:
    """The switch works iff the model applies a 4-D decoder mask exactly as given: (a) an explicit causal
    mask reproduces the model's own attention, (b) a mask allowing only the LAST key (a future key for
    every earlier query) gives weight exactly 1 there. Both hold whatever the weights are."""
    family = str(model.config.model_type)
    m = dec.shape[1]
    last_only = torch.zeros(1, 1, m, m, dtype=torch.bool)
    last_only[..., -1] = True
    # A speech model's encoder reads a whole window: its output is run once and reused (the mask is the decoder's).
    reuse = BaseModelOutput(last_hidden_state=default.encoder_last_hidden_state) if src.is_floating_point() else None
    try:
        explicit = forward(model, src, dec, causal_mask(m), encoder_outputs=reuse)
        future = forward(model, src, dec, last_only, encoder_outputs=reuse)
    except Exception as exc:  # the family rejects a 4-D decoder mask
        return False, (f"{family} does not accept a custom decoder self-attention mask "
                       f"({type(exc).__name__}: {exc}), so the causal mask cannot be switched off.")
    same = all(torch.allclose(a, b, rtol=0, atol=1e-6)
               for a, b in zip(explicit.decoder_attentions, default.decoder_attentions))
    follows = all(bool((a[0, :, :, -1] == 1).all()) for a in future.decoder_attentions)
    if not (same and follows):
        return False, (f"{family} ignores or alters a custom decoder self-attention mask (passed as a 4-D "
                       f"decoder_attention_mask), so the causal mask cannot be switched off reliably.")
    note = "The mask is passed as a 4-D decoder_attention_mask, which Hugging Face applies as given."
    if getattr(model.config, "relative_attention_num_buckets", None):
        note += (" T5-style decoders use unidirectional relative-position buckets: every future key falls in "
                 "the same bucket as the query's own position, so with the mask off the model sees future "
                 "tokens but not how far ahead they are.")
    return True, note
