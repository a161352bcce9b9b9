"""The logit lens and gradient saliency on a Hugging Face seq2seq model, from the model's own modules.

Lens: the decoder's hidden states (`output_hidden_states=True`: the embeddings, then each layer's output; the
last one after the decoder's final norm where the family has one) through that final norm (T5 / mT5:
`final_layer_norm`; mBART / Pegasus / M2M-100: `layer_norm`; Marian / BART are post-LN and have none) and the
output projection as the model applies it (`lm_head`, plus `final_logits_bias` where the model has one; T5 with
tied embeddings first scales by d_model^-0.5). Checked on every call: the projection of the last hidden state
must give the model's own logits, or the lens is refused rather than shown wrong.

Saliency: the encoder and decoder stacks run from `inputs_embeds`, the output head applied (as the lens applies
it) at the rows asked for, not over the whole vocabulary at every position. Families differ in where the embedding
scale (sqrt(d_model)) is applied to embeddings passed in, so the scale that reproduces the model's own logits
from ids is found by trying it (model.engine.gradients).
"""

from __future__ import annotations

from typing import Any

import torch
from attention_lens.model.engine.errors import ModelInputError
from attention_lens.model.engine.gradients import EmbeddedRun
from attention_lens.model.engine.masks import full_mask
from attention_lens.model.engine.runs import RawRun
from attention_lens.model.hf.ablation import ablating
from attention_lens.model.hf.probes import additive_mask

AGREE = 1e-4  # largest logit difference accepted between the lens's last layer and the model's own logits


def _final_norm(model: Any) -> Any:
    decoder = model.get_decoder()
    return getattr(decoder, "final_layer_norm", None) or getattr(decoder, "layer_norm", None)


def project(model: Any, h: torch.Tensor) -> torch.Tensor:
    """(..., d_model) after the final norm -> (..., V) logits, as the model's own head computes them."""
    if str(model.config.model_type) in ("t5", "mt5") and model.config.tie_word_embeddings:
        h = h * model.config.d_model ** -0.5
    logits = model.get_output_embeddings()(h)
    bias = getattr(model, "final_logits_bias", None)
    return logits + bias if bias is not None else logits


def _decoder_mask(causal: bool, length: int, batch: int, dtype: torch.dtype,
                  device: torch.device | None = None) -> dict[str, torch.Tensor]:
    if causal:
        return {}
    return {"decoder_attention_mask": additive_mask(full_mask(length, device), dtype).expand(batch, 1, length,
                                                                                             length)}


@torch.no_grad()
def layer_logits(model: Any, run: RawRun, causal: bool, keep: dict[str, torch.Tensor | None]) -> torch.Tensor:
    """Replay the run in one pass with the same heads off -> (L_dec, m, V); the last row is the model's logits."""
    src, dec = torch.tensor([run.src_ids], device=model.device), torch.tensor([run.dec_in_ids], device=model.device)
    with ablating(model, keep):
        out = model(input_ids=src, attention_mask=torch.ones_like(src), decoder_input_ids=dec, use_cache=False,
                    output_hidden_states=True, **_decoder_mask(causal, dec.shape[1], 1, model.dtype, model.device))
    hidden = out.decoder_hidden_states  # L + 1: embeddings, then every layer's output
    gap = (project(model, hidden[-1][0]) - out.logits[0]).abs().max().item()
    if gap > AGREE:
        raise ModelInputError(f"the logit lens is not available for this {model.config.model_type} model: its "
                              f"output head could not be reproduced (logits differ by {gap:.2g})")
    norm = _final_norm(model)
    rows = [project(model, norm(h[0]) if norm is not None else h[0]) for h in hidden[1:-1]]
    return torch.stack([*rows, out.logits[0]])


def embedded_run(model: Any, run: RawRun, chosen: list[int], causal: bool, pad: int,
                 keep: dict[str, torch.Tensor | None]) -> EmbeddedRun:
    """The run's rows and their chosen ids, as a function of the embeddings (pad: the padding id). The pass
    runs the encoder and the decoder stacks and applies the output head (`project`) only at the row each batch
    element asks for; checked once per run against the model's own logits from ids at every row."""
    n, m = len(run.src_ids), len(run.dec_in_ids)
    src_table, tgt_table = model.get_encoder().embed_tokens, model.get_decoder().embed_tokens
    device = model.device
    chosen_ids = torch.tensor(chosen, dtype=torch.long, device=device)

    def run_from(source: torch.Tensor, prefix: torch.Tensor, rows: torch.Tensor,
                 scales: tuple[float, float], probability: bool = False) -> torch.Tensor:
        batch, length = source.shape[0], prefix.shape[1]
        src_keep = torch.ones(batch, n, dtype=torch.long, device=device)
        with ablating(model, keep):
            memory = model.get_encoder()(inputs_embeds=source * scales[0], attention_mask=src_keep).last_hidden_state
            mask = _decoder_mask(causal, length, batch, model.dtype, device).get("decoder_attention_mask")
            hidden = model.get_decoder()(inputs_embeds=prefix * scales[1], attention_mask=mask,
                                         encoder_hidden_states=memory, encoder_attention_mask=src_keep,
                                         use_cache=False).last_hidden_state
        rows = rows.to(device)
        logits = project(model, hidden[torch.arange(batch, device=device), rows])  # (B, V): only the rows asked for
        if probability:
            logits = logits.float().softmax(-1)
        return logits.gather(1, chosen_ids[rows][:, None])[:, 0]

    with torch.no_grad():
        src_ids, ids = torch.tensor([run.src_ids], device=device), torch.tensor([run.dec_in_ids], device=device)
        source, target = src_table(src_ids)[0], tgt_table(ids)[0]
        rows = torch.arange(m, device=device)
        with ablating(model, keep):
            want = model(input_ids=src_ids, attention_mask=torch.ones_like(src_ids), decoder_input_ids=ids,
                         use_cache=False, **_decoder_mask(causal, m, 1, model.dtype, device)
                         ).logits[0, rows, chosen_ids]
        candidates = [(a, b) for a in _scales(model.get_encoder()) for b in _scales(model.get_decoder())]
        scales = next((c for c in candidates
                       if (run_from(source.expand(m, -1, -1), target.expand(m, -1, -1), rows, c) - want)
                       .abs().max().item() <= AGREE), None)
        if scales is None:
            raise ModelInputError(f"gradient saliency is not available for this {model.config.model_type} model: "
                                  f"a pass from its embeddings does not reproduce its logits")
        base = torch.tensor([pad], device=device)
        source_baseline = src_table(base).expand(n, -1).clone()
        target_baseline = tgt_table(base).expand(m, -1).clone()
    return EmbeddedRun(source=source, target=target, source_baseline=source_baseline,
                       target_baseline=target_baseline, chosen=tuple(chosen), causal=causal,
                       logits=lambda s, p, r: run_from(s, p, r, scales),
                       probabilities=lambda s, p, r: run_from(s, p, r, scales, probability=True))


def _scales(stack: Any) -> tuple[float, ...]:
    """1.0, and the stack's own embedding scale where it has one other than 1."""
    scale = getattr(stack, "embed_scale", None)
    return (1.0,) if not isinstance(scale, (int, float)) or scale == 1.0 else (1.0, float(scale))
