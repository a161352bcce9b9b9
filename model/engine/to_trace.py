"""A raw run (ids and arrays) -> a Trace (pieces, probabilities, options), for any engine."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from attention_lens.model.engine.runs import DecodeOptions, RawRun
from attention_lens.model.engine.tensors import softmax
from attention_lens.model.engine.trace import Step, Trace

if TYPE_CHECKING:
    from attention_lens.model.engine.contract import Engine


def to_trace(engine: Engine, run: RawRun, options: DecodeOptions, normalised: str, warnings: list[str],
             contributions: dict[str, Any] | None = None, why: dict[str, Any] | None = None) -> Trace:
    """Source ids are read with the source vocabulary, every other id with the target one. The Trace keeps
    `options` as they are (its JSON form: DecodeOptions.to_record)."""
    probs = softmax(run.logits.astype(np.float64))
    k = min(options.report_top_k, probs.shape[1])
    steps = []
    teacher = options.mode == "teacher_forced"
    for t in range(len(run.out_ids)):
        order = np.argsort(-probs[t])[:k]
        top = tuple((engine.piece(int(i)), float(probs[t, i])) for i in order)
        if teacher:
            best = int(order[0])
            extra = {"target_prob": float(probs[t, run.out_ids[t]]), "correct": best == run.out_ids[t]}
            steps.append(Step(engine.piece(best), best, float(probs[t, best]), top, extra))
        else:
            tid = run.out_ids[t]
            steps.append(Step(engine.piece(tid), tid, float(probs[t, tid]), top))
    return Trace(model=engine.model_info(), options=options,
                 forced_tokens=tuple(engine.piece(i) for i in options.forced), normalised_source=normalised,
                 warnings=tuple(warnings), score=run.score,
                 source_tokens=tuple(engine.source_piece(i) for i in run.src_ids),
                 decoder_input_tokens=tuple(engine.piece(i) for i in run.dec_in_ids),
                 target_tokens=tuple(engine.piece(i) for i in run.out_ids),
                 encoder_self_attention=run.enc_attn.astype(np.float32, copy=False),
                 decoder_self_attention=run.dec_attn.astype(np.float32, copy=False),
                 cross_attention=run.cross_attn.astype(np.float32, copy=False), steps=tuple(steps),
                 contributions=contributions, **(why or {}))
