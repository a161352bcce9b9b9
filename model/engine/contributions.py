"""Beyond raw attention weights: norm-weighted attention, rollout, and the source / prefix share of each
prediction, computed from a run's weights and what the engine's replay returns (`ContributionParts`). It lives at
the seam because a Trace carries it (`DecodeOptions.contributions`): the engine contract computes it, and
analyses above the seam (alignment methods) read it from here.

- Norm-weighted attention (Kobayashi et al. 2020, "Attention is not only a weight"): alpha_ij * ||v_j W_O^h||,
  rows renormalised to sum to 1 for display (a row a switched-off head leaves empty stays 0).
- Rollout (Abnar & Zuidema 2020): per layer the head's weights mixed with the identity for the residual,
  0.5 A + 0.5 I, composed with the head-mean rollout of the layers below; encoder self and decoder self over
  their own layers; cross-attention composed with the encoder's rollout through its last layer.
- Source share: a residual-stream decomposition in the spirit of ALTI+ (Ferrando et al. 2022), simplified:
  every decoder position starts all prefix (its token embedding); each decoder layer i mixes, with weight
  ||x_i|| for the residual, sum_h alpha_ij ||v_j W_O^h|| for each prefix position j (self-attention) and the
  same for each source token (cross-attention, all source); the share of a mix is the weighted mean of the
  shares mixed. LayerNorm and the FFN act per position and keep the share. source_share + prefix share = 1.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from attention_lens.model.engine.runs import ContributionParts, RawRun

METHOD = ("norm-weighted attention alpha*||v W_O^h|| (Kobayashi et al. 2020); attention rollout with the "
          "residual, 0.5A+0.5I (Abnar & Zuidema 2020), cross composed with the encoder rollout; source share: "
          "norm-weighted residual-stream decomposition, a simplified ALTI+ (Ferrando et al. 2022)")
KEYS = ("encoder_self_attention", "decoder_self_attention", "cross_attention")


def renormalise(a: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row stays zero."""
    total = a.sum(axis=-1, keepdims=True)
    return np.divide(a, total, out=np.zeros_like(a), where=total > 0)


def norm_weighted(weights: np.ndarray, norms: np.ndarray) -> np.ndarray:
    """weights (L, h, q, k), norms (L, h, k) -> alpha_ij ||v_j W_O^h||, rows renormalised."""
    return renormalise(weights * norms[:, :, None, :])


def rollout(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Self-attention weights (L, h, q, q) -> (per layer and head (L, h, q, q), through the last layer (q, q))."""
    q = weights.shape[-1]
    eye = np.eye(q, dtype=np.float64)
    below = eye
    out = np.zeros(weights.shape, dtype=np.float64)
    for layer in range(weights.shape[0]):
        out[layer] = (0.5 * weights[layer].astype(np.float64) + 0.5 * eye) @ below
        below = out[layer].mean(axis=0)
    return out, below


def source_share(cross: np.ndarray, dec: np.ndarray, parts: ContributionParts) -> np.ndarray:
    """(m,) the share of each decoder row's prediction that comes from the source, in [0, 1]."""
    m = dec.shape[-1]
    share = np.zeros(m)
    for layer in range(dec.shape[0]):
        from_prefix = (dec[layer] * parts.value_norms["decoder_self_attention"][layer][:, None, :]).sum(0)  # (m, m)
        from_source = (cross[layer] * parts.value_norms["cross_attention"][layer][:, None, :]).sum((0, 2))  # (m,)
        resid = parts.residual_norms[layer]
        total = resid + from_prefix.sum(-1) + from_source
        share = (resid * share + from_prefix @ share + from_source) / total
    return np.clip(share, 0.0, 1.0)


def contributions(run: RawRun, parts: ContributionParts) -> dict[str, Any]:
    """The Trace's `contributions` object (arrays float32) for one run."""
    weights = {"encoder_self_attention": run.enc_attn, "decoder_self_attention": run.dec_attn,
               "cross_attention": run.cross_attn}
    enc_roll, enc_through = rollout(run.enc_attn)
    dec_roll, _ = rollout(run.dec_attn)
    cross_roll = run.cross_attn.astype(np.float64) @ enc_through
    return {"method": METHOD,
            "norm_weighted": {k: norm_weighted(weights[k], parts.value_norms[k]).astype(np.float32) for k in KEYS},
            "rollout": {"encoder_self_attention": enc_roll.astype(np.float32),
                        "decoder_self_attention": dec_roll.astype(np.float32),
                        "cross_attention": cross_roll.astype(np.float32)},
            "source_share": source_share(run.cross_attn.astype(np.float64), run.dec_attn.astype(np.float64),
                                         parts).astype(np.float32)}
