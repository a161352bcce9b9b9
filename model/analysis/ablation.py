"""Which heads matter: the teacher-forced loss with each head alone switched off (Michel et al. 2019, "Are
sixteen heads really better than one?"; Voita et al. 2019), every head of every kind, in the engine's own
forward passes (an option, `DecodeOptions.ablate`; the model is never changed)."""

from __future__ import annotations

from typing import Any

from attention_lens.model.analysis.scores import source_ids, teacher_forced_totals
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.heads import every_head
from attention_lens.model.engine.runs import DecodeOptions
from tqdm import tqdm


def teacher_forced_loss(engine: Engine, srcs: list[list[int]], labels: list[list[int]], ablate: tuple[str, ...],
                        batch_size: int = 64) -> float:
    """Mean cross-entropy per target token (nats), teacher forcing in the model's trained setting."""
    causal, shift = engine.trained_setting
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift, ablate=ablate)
    return teacher_forced_totals(engine, srcs, labels, options, batch_size).loss


def rank_heads(engine: Engine, sources: list[str], targets: list[str], progress: bool = True) -> dict[str, Any]:
    """{"base_loss", "heads": [{"kind", "layer", "head", "loss_increase"}] largest increase first}."""
    engine.check_switches(*engine.trained_setting)
    srcs = [source_ids(engine, s) for s in sources]
    labels = [engine.prepare_target(t)[0] for t in targets]
    base = teacher_forced_loss(engine, srcs, labels, ())
    heads = []
    heads_of = every_head(engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads)
    for kind, layer, head in tqdm(heads_of, desc="heads", unit="head", disable=not progress):
        loss = teacher_forced_loss(engine, srcs, labels, (f"{kind}:{layer}:{head}",))
        heads.append({"kind": kind, "layer": layer, "head": head, "loss_increase": loss - base})
    heads.sort(key=lambda h: -h["loss_increase"])
    return {"base_loss": base, "heads": heads}
