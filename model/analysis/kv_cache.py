"""The key-value cache of free-running decoding, counted, measured and checked.

At step t (0-based: the decoder reads its (t+1)-th token) each decoder layer's self-attention needs the keys and
values of positions 0..t: with the cache, t of them are reused and 1 is computed; its cross-attention needs the
keys and values of the n encoder positions, computed once (our engine when decoding starts, Hugging Face's at
step 0) and reused at every step. Without the cache a step recomputes every earlier position.

Work is counted in multiply-adds of the decoder's matrix products (layer norms, biases, softmax and the
encoder left out: the encoder runs once either way), from the model's real sizes (Engine.decoder_dims), with
d = d_model, A = heads x d_k, F = d_ff, g = feed-forward matrices, V = vocabulary, per layer:

    cached step t (T = t+1 positions so far)      recompute of step t (all T positions)
    self-attention   4dA + 2TA                     4TdA + 2T^2 A
    cross-attention  2dA + 2nA                     2TdA + 2ndA + 2TnA
    cross K/V        2ndA at step 0 only           (inside the line above, every step)
    feed-forward     g d F                         T g d F
and once per step d V for the next-token logits (of the last position only, in both).
So a cached step costs O(d^2 + (T + n) d) and a recompute O(T d^2 + T^2 d + n d^2); over a generation of T
steps the attention work is O(T^2) against O(T^3) (the Annotated Transformer's and the references' account).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

import numpy as np
import torch
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.runs import DecodeOptions
from attention_lens.model.engine.tensors import to_numpy

PARTS = ("self_attention", "cross_attention", "cross_kv", "feed_forward", "logits")


@dataclass(frozen=True)
class Dims:
    """The decoder sizes the counts use (Engine.decoder_dims)."""

    d_model: int
    d_attn: int
    d_ff: int
    ff_matrices: int
    vocab: int
    layers: int


def dims_of(engine: Engine) -> Dims:
    return Dims(**engine.decoder_dims(), layers=engine.n_decoder_layers)


def step_macs(dims: Dims, n: int, t: int, cached: bool) -> dict[str, int]:
    """Multiply-adds of decoding step t (0-based) for a source of n tokens, per part, summed over the layers."""
    d, a, f, g, layers = dims.d_model, dims.d_attn, dims.d_ff, dims.ff_matrices, dims.layers
    big_t = t + 1
    if cached:
        per_layer = {"self_attention": 4 * d * a + 2 * big_t * a, "cross_attention": 2 * d * a + 2 * n * a,
                     "cross_kv": 2 * n * d * a if t == 0 else 0, "feed_forward": g * d * f}
    else:
        per_layer = {"self_attention": 4 * big_t * d * a + 2 * big_t * big_t * a,
                     "cross_attention": 2 * big_t * d * a + 2 * big_t * n * a, "cross_kv": 2 * n * d * a,
                     "feed_forward": big_t * g * d * f}
    out = {k: layers * v for k, v in per_layer.items()}
    out["logits"] = d * dims.vocab
    return out


def generation_macs(dims: Dims, n: int, steps: int, cached: bool) -> int:
    """Multiply-adds of a whole generation of `steps` tokens."""
    return sum(sum(step_macs(dims, n, t, cached).values()) for t in range(steps))


def expected_rows(n: int, t: int, layers: int) -> list[tuple[int, int]]:
    """What each decoder layer's cache holds after step t: t+1 self-attention rows (t reused, 1 new) and the n
    cross-attention rows."""
    return [(t + 1, n)] * layers


@dataclass(frozen=True)
class Measured:
    """One step of a real decode, cached against recomputed (medians over `repeats` runs, in seconds)."""

    step: int
    cached_seconds: float
    recompute_seconds: float
    repeats: int
    rows_before: list[tuple[int, int]]  # per layer, the cache before the step (read off its tensors)
    rows_after: list[tuple[int, int]]  # ... and after it
    max_attention_difference: float  # largest |cached - recomputed| over the step's attention rows
    max_logit_difference: float


@torch.inference_mode()
def measure_step(engine: Engine, src_ids: list[int], dec_in_ids: list[int], step: int,
                 repeats: int = 5) -> Measured:
    """Decode dec_in_ids[:step] with the cache, then time step `step` cached and as a recompute of every
    position (the encoder output reused by both), `repeats` times on a fresh decoder; compare their rows."""
    if not 0 <= step < len(dec_in_ids):
        raise ValueError(f"step must be in 0..{len(dec_in_ids) - 1}, got {step}")
    cached, recomputed = [], []
    for _ in range(repeats):
        stepper = engine.start_decoding([src_ids], DecodeOptions(), need_weights=True)
        for i in range(step):
            stepper.step(torch.tensor([[dec_in_ids[i]]]), i)
        before = stepper.cache_rows()
        start = time.perf_counter()
        logits, self_rows, cross_rows = stepper.step(torch.tensor([[dec_in_ids[step]]]), step)
        cached.append(time.perf_counter() - start)
        after = stepper.cache_rows()
        start = time.perf_counter()
        r_logits, r_self, r_cross = stepper.recompute(torch.tensor([dec_in_ids[: step + 1]]))
        recomputed.append(time.perf_counter() - start)
    attn = max(float(np.abs(to_numpy(a) - to_numpy(b)).max()) for a, b in zip([*self_rows, *cross_rows],
                                                                                 [*r_self, *r_cross]))
    return Measured(step, statistics.median(cached), statistics.median(recomputed), repeats, before, after, attn,
                    float(np.abs(to_numpy(logits) - to_numpy(r_logits)).max()))
