"""The logit lens on the decoder (nostalgebraist 2020; for encoder-decoders, as in Langedijk et al. 2023's
decoder lens): at every decoder row, what each decoder layer would predict if the model stopped there, read
through the final norm and output projection the model applies to its last layer (the engine's
`layer_logits`; model.builtin.lens, model.hf.lens). The last layer's distribution is the model's own.

Trace key `lens` (JSON-ready, layers 1-based as a person reads them):
`{"k": int, "layers": L, "top_k": [[[{"token", "prob"}] * k] * L] * m, "chosen_prob": [[float] * L] * m,
  "chosen_rank": [[int] * L] * m, "first_top_layer": [int | None] * m}`: per row and layer the k most likely
tokens with probabilities, the probability and rank (1 = top) of the row's chosen token (the token decoding
chose; in teacher forcing the model's top prediction), and the first layer from which the chosen token is the
top-1 prediction at that layer and every later one (None when the last layer's top-1 is another token: a sampled
or forced choice). A tie for the top counts as top-1.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from attention_lens.model.engine.tensors import softmax


def first_top_layer(ranks: list[int]) -> int | None:
    """ranks of the chosen token per layer (1 = top) -> the first layer (1-based) from which it stays top-1."""
    first = None
    for layer in range(len(ranks), 0, -1):
        if ranks[layer - 1] != 1:
            break
        first = layer
    return first


def _top_k(row: np.ndarray, kth: float, k: int) -> np.ndarray:
    """The k largest entries' indices of row, largest first, ties by index (as a stable argsort of -row would
    give them), found among the entries >= the k-th largest value kth instead of sorting the whole vocabulary."""
    cand = np.flatnonzero(row >= kth)
    return cand[np.lexsort((cand, -row[cand]))][:k]


def lens(layer_logits: np.ndarray, chosen: list[int], piece: Callable[[int], str], k: int) -> dict[str, Any]:
    """layer_logits (L, m, V), chosen (m,) ids -> the Trace's `lens` object (see the module docstring)."""
    probs = softmax(layer_logits.astype(np.float64))  # (L, m, V)
    n_layers, m, vocab = probs.shape
    if len(chosen) != m:
        raise ValueError(f"lens: {len(chosen)} chosen ids for {m} decoder rows")
    k = min(k, vocab)
    kth = np.partition(probs, vocab - k, axis=-1)[..., vocab - k]  # (L, m): each row's k-th largest probability
    picked = probs[:, np.arange(m), np.asarray(chosen, dtype=np.int64)]  # (L, m): the chosen token's probability
    ranks_all = (probs > picked[..., None]).sum(-1) + 1  # (L, m): 1 = top (a tie for the top counts as top)
    top_k, chosen_prob, chosen_rank, first = [], [], [], []
    for t in range(m):
        top_k.append([[{"token": piece(int(i)), "prob": float(probs[la, t, i])}
                       for i in _top_k(probs[la, t], kth[la, t], k)] for la in range(n_layers)])
        chosen_prob.append([float(p) for p in picked[:, t]])
        ranks = [int(r) for r in ranks_all[:, t]]
        chosen_rank.append(ranks)
        first.append(first_top_layer(ranks))
    return {"k": k, "layers": n_layers, "top_k": top_k, "chosen_prob": chosen_prob, "chosen_rank": chosen_rank,
            "first_top_layer": first}


def check(d: Any, m: int, n_layers: int) -> None:
    """Raise ValueError unless d is a lens object for m rows and n_layers decoder layers."""
    if not isinstance(d, dict) or d.get("layers") != n_layers:
        raise ValueError(f"trace: lens must be an object for {n_layers} decoder layers")
    for key in ("top_k", "chosen_prob", "chosen_rank", "first_top_layer"):
        if not isinstance(d.get(key), list) or len(d[key]) != m:
            raise ValueError(f"trace: lens {key} must hold one entry per decoder row ({m})")
    if any(len(row) != n_layers for key in ("top_k", "chosen_prob", "chosen_rank") for row in d[key]):
        raise ValueError(f"trace: lens rows must hold one entry per decoder layer ({n_layers})")
