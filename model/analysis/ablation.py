"""Which heads matter: the teacher-forced loss with each head alone switched off (Michel et al. 2019, "Are
sixteen heads really better than one?"; Voita et al. 2019), every head of every kind, in the engine's own
forward passes (the model is never changed).

The sums are kept as counts (`HeadLosses`: label tokens, the summed negative log-likelihood with no head off and
with each head off), so that batches, and the shards of a file run apart (`merge`), add up exactly; the losses
are computed from the sums at the end. The engine does the passes (`Engine.head_off_nll`: ours switches many
heads off in one batched pass, a head mask per row)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from attention_lens.model.analysis.scores import source_ids
from attention_lens.model.engine.contract import Engine
from attention_lens.model.engine.heads import every_head
from attention_lens.model.engine.runs import DecodeOptions

BATCH = 32  # sentences per call of Engine.head_off_nll


@dataclass
class HeadLosses:
    """Teacher forcing summed over sentences: label tokens, the summed NLL with no head off (`base_nll`) and with
    each head of `heads` alone off (`nll`, same order)."""

    heads: list[str]
    tokens: int = 0
    sentences: int = 0
    base_nll: float = 0.0
    nll: np.ndarray = field(default=None)  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.nll is None:
            self.nll = np.zeros(len(self.heads))

    def add(self, engine: Engine, srcs: list[list[int]], labels: list[list[int]], options: DecodeOptions) -> None:
        sums = engine.head_off_nll(srcs, labels, options, self.heads)
        self.base_nll += float(sums[0])
        self.nll += sums[1:]
        self.tokens += sum(len(lab) for lab in labels)
        self.sentences += len(srcs)

    def result(self) -> dict[str, Any]:
        """{"base_loss", "heads": [{"kind", "layer", "head", "loss_increase"}] largest increase first, and the
        counts a merge adds: "n", "tokens", "base_nll", per head "nll"}."""
        tokens = max(self.tokens, 1)
        base = self.base_nll / tokens
        heads = []
        for spec, nll in zip(self.heads, self.nll):
            kind, layer, head = spec.split(":")
            heads.append({"kind": kind, "layer": int(layer), "head": int(head), "loss_increase": nll / tokens - base,
                          "nll": float(nll)})
        heads.sort(key=lambda h: -h["loss_increase"])
        return {"base_loss": base, "heads": heads, "n": self.sentences, "tokens": self.tokens,
                "base_nll": self.base_nll}

    @classmethod
    def merged(cls, results: Sequence[dict[str, Any]]) -> HeadLosses:
        """The sums of several `result()`s (shards of one file): counts added, never losses averaged."""
        first = results[0]
        heads = [f"{h['kind']}:{h['layer']}:{h['head']}" for h in first["heads"]]
        total = cls(heads)
        for r in results:
            by_name = {f"{h['kind']}:{h['layer']}:{h['head']}": h["nll"] for h in r["heads"]}
            if set(by_name) != set(heads):
                raise ValueError("merge: the results rank different heads (not the same model)")
            total.nll += np.array([by_name[h] for h in heads])
            total.base_nll += r["base_nll"]
            total.tokens += r["tokens"]
            total.sentences += r["n"]
        return total


def ranking_options(engine: Engine) -> DecodeOptions:
    """Teacher forcing in the model's trained setting (refused with the engine's reason when it cannot run it)."""
    causal, shift = engine.trained_setting
    engine.check_switches(causal, shift)
    return DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)


def every_head_name(engine: Engine) -> list[str]:
    return [f"{k}:{la}:{h}" for k, la, h in every_head(engine.n_encoder_layers, engine.n_decoder_layers,
                                                       engine.n_heads)]


def rank_pairs(engine: Engine, pairs: Iterable[Sequence[tuple[str, str]]], losses: HeadLosses | None = None
               ) -> HeadLosses:
    """Add batches of (source, target) pairs to `losses` (a new HeadLosses over every head when None)."""
    options = ranking_options(engine)
    losses = losses or HeadLosses(every_head_name(engine))
    for batch in pairs:
        srcs = [source_ids(engine, s) for s, _ in batch]
        labels = [engine.prepare_target(t)[0] for _, t in batch]
        losses.add(engine, srcs, labels, options)
    return losses


class FileRanking:
    """Every head's loss increase and role over pairs given batch by batch (a file read as a stream: `heads`, the
    Heads page's upload): each batch is ranked (HeadLosses) and traced for the roles (head_roles.RoleTallies),
    then dropped, so what is held is per-head sums, whatever the number of pairs."""

    def __init__(self, engine: Engine) -> None:
        from attention_lens.model.analysis.head_roles import RoleTallies

        self.engine = engine
        self.losses = HeadLosses(every_head_name(engine))
        self.roles = RoleTallies(engine)

    def add(self, examples: Sequence[Any]) -> None:
        """One batch of examples (anything with .source, .target and .gold: corpora.Example, stream.Line)."""
        from attention_lens.model.corpora import Example

        rank_pairs(self.engine, [[(x.source, x.target) for x in examples]], self.losses)
        self.roles.add([Example(x.source, x.target, x.gold) for x in examples])

    @property
    def sentences(self) -> int:
        return self.losses.sentences

    def ranking(self) -> dict[str, Any]:
        """HeadLosses.result(): base_loss, heads largest increase first, and the counts a merge adds."""
        return self.losses.result()

    def role_result(self) -> dict[str, Any]:
        """RoleTallies.result(): n, rule, heads (each head's figures and role), counts."""
        return self.roles.result()


def rank_heads(engine: Engine, sources: list[str], targets: list[str], progress: bool = True,
               batch_size: int = BATCH) -> dict[str, Any]:
    """{"base_loss", "heads": [{"kind", "layer", "head", "loss_increase", "nll"}] largest increase first, "n",
    "tokens", "base_nll"} over the pairs, in batches of similar length."""
    from tqdm import tqdm

    order = sorted(range(len(sources)), key=lambda i: len(sources[i]) + len(targets[i]))
    batches = [[(sources[i], targets[i]) for i in order[k:k + batch_size]] for k in range(0, len(order), batch_size)]
    losses = rank_pairs(engine, tqdm(batches, desc="heads", unit="batch", disable=not progress))
    return losses.result()
