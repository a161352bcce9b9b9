"""Which heads matter: the teacher-forced loss with each head alone switched off (Michel et al. 2019, "Are
sixteen heads really better than one?"; Voita et al. 2019), every head of every kind, in the engine's own
forward passes (an option, `DecodeOptions.ablate`; the model is never changed)."""

from __future__ import annotations

from typing import Any

import numpy as np
from tqdm import tqdm

from model.engine.contract import Engine
from model.engine.heads import KIND_CODES
from model.engine.runs import DecodeOptions


def teacher_forced_loss(engine: Engine, srcs: list[list[int]], labels: list[list[int]], ablate: tuple[str, ...],
                        batch_size: int = 64) -> float:
    """Mean cross-entropy per target token (nats), teacher forcing in the model's trained setting."""
    causal, shift = engine.trained_setting
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift, ablate=ablate)
    total, count = 0.0, 0
    for i in range(0, len(srcs), batch_size):
        runs = engine.teacher_forced_batch(srcs[i:i + batch_size], labels[i:i + batch_size], options,
                                           need_weights=False)
        for run in runs:
            z = run.logits.astype(np.float64)
            logp = z - z.max(-1, keepdims=True)
            logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
            total -= float(logp[np.arange(len(run.out_ids)), run.out_ids].sum())
            count += len(run.out_ids)
    return total / max(count, 1)


def every_head(engine: Engine) -> list[tuple[str, int, int]]:
    """(kind, layer, head), 1-based, in the order enc, dec, cross."""
    layers = {"enc": engine.n_encoder_layers, "dec": engine.n_decoder_layers, "cross": engine.n_decoder_layers}
    return [(k, la, h) for k in KIND_CODES for la in range(1, layers[k] + 1) for h in range(1, engine.n_heads + 1)]


def rank_heads(engine: Engine, sources: list[str], targets: list[str], progress: bool = True) -> dict[str, Any]:
    """{"base_loss", "heads": [{"kind", "layer", "head", "loss_increase"}] largest increase first}."""
    engine.check_switches(*engine.trained_setting)
    srcs = [engine.fit_source(engine.encode_source(engine.normalise(s))[0]) for s in sources]
    labels = [engine.prepare_target(t)[0] for t in targets]
    base = teacher_forced_loss(engine, srcs, labels, ())
    heads = []
    for kind, layer, head in tqdm(every_head(engine), desc="heads", unit="head", disable=not progress):
        loss = teacher_forced_loss(engine, srcs, labels, (f"{kind}:{layer}:{head}",))
        heads.append({"kind": kind, "layer": layer, "head": head, "loss_increase": loss - base})
    heads.sort(key=lambda h: -h["loss_increase"])
    return {"base_loss": base, "heads": heads}
