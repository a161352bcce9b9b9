"""Beam search bookkeeping shared by every engine; the engine supplies one decoding step and a cache reorder.

A hypothesis ends when it emits an end token among the top K candidates; search stops when K have ended (so
K = 1 is exactly greedy). Final ranking: log-probability divided by length. Every hypothesis carries its own
attention rows, as they were computed at its steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from model.engine import RawRun

# step(last ids (live, 1), t) -> (logits (live, V), self-attention per layer (live, h, 1, t+1),
#                                 cross-attention per layer (live, h, 1, n))
Step = Callable[[torch.Tensor, int], tuple[torch.Tensor, Sequence[torch.Tensor], Sequence[torch.Tensor]]]


def _np(x: torch.Tensor) -> np.ndarray:
    return x.detach().float().numpy()


def beam_search(step: Step, reorder: Callable[[torch.Tensor], None], *, src_ids: list[int], enc_attn: np.ndarray,
                n_heads: int, start_id: int, eos_ids: set[int], k_beams: int, max_len: int,
                forced: Sequence[int] = (),
                restrict: Callable[[torch.Tensor], torch.Tensor] = lambda logp: logp,
                ) -> tuple[list[RawRun], list[list[dict]]]:
    """Returns (final hypotheses best first, the live beams after every step as {"tokens": ids, "score"}).

    reorder(index) must make the engine's cache follow the kept hypotheses (index: (live',) parent rows).
    restrict(logp) may forbid tokens in free choice (e.g. padding); forced tokens are taken as they are.
    """
    n = len(src_ids)
    # Each live hypothesis: (tokens read so far, chosen ids, score, per-step records).
    live: list[tuple[list[int], list[int], float, list]] = [([start_id], [], 0.0, [])]
    finished: list[tuple[list[int], list[int], float, list]] = []
    beam_steps: list[list[dict]] = []
    for t in range(max_len):
        last = torch.tensor([[h[0][-1]] for h in live], dtype=torch.long)
        logits, self_attns, cross_attns = step(last, t)
        logp = logits.log_softmax(-1)  # (live, V)
        scores = torch.tensor([h[2] for h in live])
        if t < len(forced):
            cand = logp[:, forced[t]] + scores
            order = cand.argsort(descending=True)[: 2 * k_beams]
            picks = [(int(i), forced[t], float(cand[i])) for i in order]
        else:
            total = restrict(logp) + scores[:, None]
            flat = total.view(-1).topk(min(2 * k_beams, total.numel()))
            vocab = total.shape[1]
            picks = [(int(i) // vocab, int(i) % vocab, float(s)) for s, i in zip(flat.values, flat.indices)]
        new_live, parents = [], []
        for rank, (parent, tok, score) in enumerate(picks):
            inputs, chosen, _, records = live[parent]
            record = (np.stack([_np(w[parent, :, 0]) for w in self_attns]),
                      np.stack([_np(w[parent, :, 0]) for w in cross_attns]), _np(logits[parent]))
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
        reorder(torch.tensor(parents, dtype=torch.long))
        live = new_live
    if len(finished) < k_beams:
        finished.extend(live[: k_beams - len(finished)])
    finished.sort(key=lambda h: -h[2] / max(len(h[1]), 1))
    runs = []
    for inputs, chosen, score, records in finished[:k_beams]:
        m = len(chosen)
        layers = records[0][0].shape[0]
        dec = np.zeros((layers, n_heads, m, m), dtype=np.float32)
        cross = np.zeros((layers, n_heads, m, n), dtype=np.float32)
        for t, (s_row, c_row, _) in enumerate(records):
            dec[:, :, t, : t + 1] = s_row
            cross[:, :, t] = c_row
        runs.append(RawRun(list(src_ids), inputs[:m], chosen, np.stack([r[2] for r in records]), enc_attn, dec,
                           cross, score=score))
    return runs, beam_steps
