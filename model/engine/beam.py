"""Beam search for every engine; the engine supplies its Stepper (one decoding step and a cache reorder).

A hypothesis ends when it emits an end token among the top K candidates; search stops when K have ended (so
K = 1 is exactly greedy). Final ranking: log-probability divided by length. Every hypothesis carries its own
attention rows, as they were computed at its steps.
"""

from __future__ import annotations

import numpy as np
import torch
from attention_lens.model.engine.runs import DecodeOptions, Decoder, RawRun
from attention_lens.model.engine.tensors import to_numpy


@torch.inference_mode()
def beam_search(engine: Decoder, src_ids: list[int], options: DecodeOptions) -> tuple[list[RawRun], list[list[dict]]]:
    """Returns (final hypotheses best first, the live beams after every step as {"tokens": ids, "score"}).

    The Stepper's reorder makes the engine's cache follow the kept hypotheses; `engine.restrict` may forbid
    tokens in free choice (e.g. padding); forced tokens are taken as they are.
    """
    n = len(src_ids)
    stepper = engine.start_decoding([src_ids], options, True)
    enc_attn = np.stack([to_numpy(w[0]) for w in stepper.enc_attentions])
    start_id, eos_ids, k_beams = engine.start_id, engine.eos_ids, options.beam_size
    forced, restrict = engine.forced_prefix(options), engine.restrict
    # Each live hypothesis: (tokens read so far, chosen ids, score, per-step records).
    live: list[tuple[list[int], list[int], float, list]] = [([start_id], [], 0.0, [])]
    finished: list[tuple[list[int], list[int], float, list]] = []
    beam_steps: list[list[dict]] = []
    for t in range(engine.decode_length(options, n)):
        last = torch.tensor([[h[0][-1]] for h in live], dtype=torch.long)
        logits, self_attns, cross_attns = stepper.step(last, t)
        logp = logits.float().log_softmax(-1)  # (live, V); float32 whatever the model's dtype
        scores = torch.tensor([h[2] for h in live], device=logp.device)
        if t < len(forced):
            cand = logp[:, forced[t]] + scores
            order = cand.argsort(descending=True)[: 2 * k_beams]
            picks = [(int(i), forced[t], float(cand[i])) for i in order]
        else:
            total = restrict(logp, t - len(forced)) + scores[:, None]
            flat = total.view(-1).topk(min(2 * k_beams, total.numel()))
            vocab = total.shape[1]
            picks = [(int(i) // vocab, int(i) % vocab, float(s)) for s, i in zip(flat.values, flat.indices)]
        new_live, parents = [], []
        for rank, (parent, tok, score) in enumerate(picks):
            inputs, chosen, _, records = live[parent]
            record = (np.stack([to_numpy(w[parent, :, 0]) for w in self_attns]),
                      np.stack([to_numpy(w[parent, :, 0]) for w in cross_attns]), to_numpy(logits[parent]))
            hyp = (inputs + [tok], chosen + [tok], score, records + [record])
            if tok in eos_ids:
                if rank < k_beams:
                    finished.append(hyp)
            elif len(new_live) < k_beams:
                new_live.append(hyp)
                parents.append(parent)
        beam_steps.append([{"tokens": list(h[1]), "score": h[2]} for h in new_live])
        if len(finished) >= k_beams or not new_live:
            break
        stepper.reorder(torch.tensor(parents, dtype=torch.long))
        live = new_live
    if len(finished) < k_beams:
        finished.extend(live[: k_beams - len(finished)])
    finished.sort(key=lambda h: -h[2] / max(len(h[1]), 1))
    runs = []
    for inputs, chosen, score, records in finished[:k_beams]:
        m = len(chosen)
        layers = records[0][0].shape[0]
        dec = np.zeros((layers, engine.n_heads, m, m), dtype=np.float32)
        cross = np.zeros((layers, engine.n_heads, m, n), dtype=np.float32)
        for t, (s_row, c_row, _) in enumerate(records):
            dec[:, :, t, : t + 1] = s_row
            cross[:, :, t] = c_row
        runs.append(RawRun(list(src_ids), inputs[:m], chosen, np.stack([r[2] for r in records]), enc_attn, dec,
                           cross, score=score))
    return runs, beam_steps
