"""What each head does over a corpus (in the spirit of Voita et al. 2019, Clark et al. 2019, Kovaleva et al.
2019): for every head of every kind, the mean share of its attention that lands on

- `same`: the key at the query's own position (for cross-attention: source position t for target row t);
- `previous` / `next`: the key one position before / after the query's;
- `first`: the first key (the first source token, or the decoder's start token);
- `eos`: keys that are the end-of-sentence token `</s>`;
- `punctuation`: keys whose text (word-start marks stripped) is all punctuation;
- `aligned` (cross-attention, where gold links exist): source pieces of the words gold-aligned (sure or
  possible) to the target word the row predicts, and `aligned_shift`, to the word the row reads (Chen et al.
  2020's shifted reading); None when there is no gold;

and `entropy`, the mean entropy of a row (nats), with `entropy_norm`, that entropy over log(keys the row could
see). A row's shares are over the keys it could see; rows that could see one key only (decoder row 0 with the
causal mask) are left out, since every share is forced there. Means are over every counted row of the corpus.

The role (ROLE_RULE, applied in this order; THRESHOLD = 0.5, LOCAL = 0.7, BROAD = 0.8):
1. `aligning`: cross-attention with gold, max(aligned, aligned_shift) >= THRESHOLD;
2. `previous-token`, `next-token`, `same-position` (positional): that share >= THRESHOLD;
3. `local` (positional, a window): same + previous + next >= LOCAL;
4. `sink`: max(first, eos) >= THRESHOLD (attention parked on a fixed token);
5. `punctuation`: punctuation >= THRESHOLD;
6. `broad`: entropy_norm >= BROAD (spread over everything);
7. `mixed`: none of these.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from attention_lens.model.analysis.alignment.links import Gold, parse_pharaoh
from attention_lens.model.analysis.alignment.words import SPECIAL_PIECES, WORD_STARTS, query_rows, word_groups
from attention_lens.model.engine.heads import KIND_CODES

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine.contract import Engine
    from attention_lens.model.engine.trace import Trace

THRESHOLD, LOCAL, BROAD = 0.5, 0.7, 0.8
SHARES = ("same", "previous", "next", "first", "eos", "punctuation", "aligned", "aligned_shift")
ROLE_RULE = ("aligning: cross-attention with gold links and max(aligned, aligned_shift) >= 0.5; else "
             "previous-token / next-token / same-position: that share >= 0.5; else local: same + previous + next "
             ">= 0.7; else sink: max(first, eos) >= 0.5; else punctuation: punctuation share >= 0.5; else broad: "
             "normalised entropy >= 0.8; else mixed")
END_PIECES = frozenset({"</s>"})


def is_punctuation(piece: str) -> bool:
    text = piece.lstrip("".join(WORD_STARTS))
    return bool(text) and all(unicodedata.category(c).startswith("P") for c in text)


class Tally:
    """Sums over rows for one kind: per head (L, h) the summed shares, entropies and counts."""

    def __init__(self, layers: int, heads: int) -> None:
        self.sums = {k: np.zeros((layers, heads)) for k in (*SHARES, "entropy", "entropy_norm")}
        self.rows = 0
        self.gold_rows = 0

    def add(self, w: np.ndarray, allowed: np.ndarray, keys: Sequence[str], aligned: np.ndarray | None = None,
            aligned_shift: np.ndarray | None = None) -> None:
        """w (L, h, q, k) one sentence's weights; allowed (q, k) what the mask let each row see; keys the key
        tokens. aligned / aligned_shift: (q, k) 0/1, the gold-aligned keys of each row, or None (no gold; a row
        with no aligned key is not counted for them)."""
        q, k = allowed.shape
        counted = allowed.sum(1) >= 2
        eos = np.array([t in END_PIECES for t in keys], dtype=float)
        punct = np.array([is_punctuation(t) for t in keys], dtype=float)
        for i in np.flatnonzero(counted):
            row = w[:, :, i]  # (L, h, k)
            for name, j in (("same", i), ("previous", i - 1), ("next", i + 1), ("first", 0)):
                if 0 <= j < k and allowed[i, j]:
                    self.sums[name] += row[:, :, j]
            self.sums["eos"] += row @ eos
            self.sums["punctuation"] += row @ punct
            p = np.clip(row, 1e-12, 1.0)
            h = -(row * np.log(p)).sum(-1)
            self.sums["entropy"] += h
            self.sums["entropy_norm"] += h / np.log(allowed[i].sum())
        self.rows += int(counted.sum())
        if aligned is not None:
            for name, gold in (("aligned", aligned), ("aligned_shift", aligned_shift)):
                for i in np.flatnonzero(counted & (gold.sum(1) > 0)):
                    self.sums[name] += w[:, :, i] @ gold[i]
            self.gold_rows += int((counted & (aligned.sum(1) > 0)).sum())

    def counts(self) -> dict[str, Any]:
        """The sums and row counts as JSON-ready lists, what a merge of shards adds (`merged`)."""
        return {"rows": self.rows, "gold_rows": self.gold_rows, "sums": {k: v.tolist() for k, v in self.sums.items()}}

    @classmethod
    def merged(cls, parts: Sequence[dict[str, dict[str, Any]]]) -> dict[str, Tally]:
        """Kind code -> the Tally of several `counts()` maps (kind code -> counts), added up."""
        out: dict[str, Tally] = {}
        for part in parts:
            for code, c in part.items():
                first = np.asarray(c["sums"]["same"])
                tally = out.setdefault(code, cls(*first.shape))
                for k, v in c["sums"].items():
                    tally.sums[k] = tally.sums[k] + np.asarray(v, dtype=float)
                tally.rows += c["rows"]
                tally.gold_rows += c["gold_rows"]
        return out

    def means(self) -> dict[str, np.ndarray | None]:
        out: dict[str, np.ndarray | None] = {k: v / max(self.rows, 1) for k, v in self.sums.items()
                                             if k not in ("aligned", "aligned_shift")}
        for name in ("aligned", "aligned_shift"):
            out[name] = self.sums[name] / self.gold_rows if self.gold_rows else None
        return out


def role(stats: dict[str, float | None]) -> str:
    """The role of one head from its figures (ROLE_RULE)."""
    aligned = [v for v in (stats.get("aligned"), stats.get("aligned_shift")) if v is not None]
    if aligned and max(aligned) >= THRESHOLD:
        return "aligning"
    for name, label in (("previous", "previous-token"), ("next", "next-token"), ("same", "same-position")):
        if stats[name] >= THRESHOLD:
            return label
    if stats["same"] + stats["previous"] + stats["next"] >= LOCAL:
        return "local"
    if max(stats["first"], stats["eos"]) >= THRESHOLD:
        return "sink"
    if stats["punctuation"] >= THRESHOLD:
        return "punctuation"
    if stats["entropy_norm"] >= BROAD:
        return "broad"
    return "mixed"


def gold_keys(trace: Trace, gold: Gold, specials: Iterable[str]) -> tuple[np.ndarray, np.ndarray] | None:
    """(m, n) 0/1 per row the source pieces gold-aligned to the target word the row predicts (plain) and reads
    (shift); None when the pieces do not group into the gold's words."""
    specials = frozenset(specials)
    src_groups = word_groups(trace.source_tokens, specials)
    tgt_groups = word_groups(trace.target_tokens, specials)
    if len(src_groups) != len(trace.normalised_source.split()):
        return None  # the pieces do not group into the words the gold counts
    try:
        gold.check(len(src_groups), len(tgt_groups))
    except ValueError:
        return None
    m, n = trace.m, trace.n
    out = []
    for reading in ("plain", "shift"):
        keys = np.zeros((m, n))
        for j, rows in enumerate(query_rows(tgt_groups, m, reading, trace.options.shift)):
            pieces = [p for i, g in enumerate(src_groups) if (i, j) in gold.possible for p in g]
            for r in rows:
                keys[r, pieces] = 1.0
        out.append(keys)
    return out[0], out[1]


def tally_traces(traces: Sequence[Trace], golds: Sequence[Gold | None] | None = None,
                 specials: Iterable[str] = SPECIAL_PIECES, tallies: dict[str, Tally] | None = None
                 ) -> dict[str, Tally]:
    """Kind code -> Tally over teacher-forced (or decoded) traces; golds: one per trace, or None. Adds to
    `tallies` when given (a corpus read batch by batch)."""
    tallies = {} if tallies is None else tallies
    for k, trace in enumerate(traces):
        gold = golds[k] if golds else None
        cross_gold = gold_keys(trace, gold, specials) if gold is not None and gold.possible else None
        n, m = trace.n, trace.m
        parts = {"enc": (trace.encoder_self_attention, np.ones((n, n), bool), trace.source_tokens),
                 "dec": (trace.decoder_self_attention, trace.decoder_mask(), trace.decoder_input_tokens),
                 "cross": (trace.cross_attention, np.ones((m, n), bool), trace.source_tokens)}
        for code, (w, allowed, keys) in parts.items():
            tally = tallies.setdefault(code, Tally(*w.shape[:2]))
            extra = cross_gold if code == "cross" and cross_gold is not None else (None, None)
            tally.add(w.astype(np.float64), allowed, keys, *extra)
    return tallies


def roles_of(tallies: dict[str, Tally]) -> list[dict[str, Any]]:
    """[{"kind", "layer", "head", "role", every share, "entropy", "entropy_norm"}] for every head, in the order
    enc, dec, cross, layer, head (1-based)."""
    out = []
    for code in KIND_CODES:
        if code not in tallies:
            continue
        means = tallies[code].means()
        layers, heads = means["same"].shape
        for la in range(layers):
            for h in range(heads):
                stats = {k: (None if v is None else float(v[la, h])) for k, v in means.items()}
                out.append({"kind": code, "layer": la + 1, "head": h + 1, "role": role(stats), **stats})
    return out


class RoleTallies:
    """Head roles over a corpus read batch by batch: each batch of examples is traced (teacher forcing in the
    model's trained setting), tallied and dropped, so memory does not grow with the corpus."""

    def __init__(self, engine: Engine) -> None:
        from attention_lens.model.analysis.alignment.sentence_attention import engine_specials
        from attention_lens.model.engine.runs import DecodeOptions

        causal, shift = engine.trained_setting
        engine.check_switches(causal, shift)
        self.engine = engine
        self.options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
        self.specials = engine_specials(engine)
        self.tallies: dict[str, Tally] = {}
        self.n = 0

    def add(self, examples: Sequence[Example]) -> None:
        """Trace and tally a batch; sentences the model cannot read are skipped."""
        results = self.engine.trace_batch([e.source for e in examples], [e.target for e in examples], self.options)
        traces, golds = [], []
        for ex, result in zip(examples, results):
            if isinstance(result, Exception):
                continue
            traces.append(result)
            golds.append(parse_pharaoh(ex.gold) if ex.gold else None)
        tally_traces(traces, golds, self.specials, self.tallies)
        self.n += len(traces)

    def result(self) -> dict[str, Any]:
        """{"n", "rule", "heads": roles_of(...), "counts": kind code -> Tally.counts() (what a merge adds)}."""
        if not self.n:
            raise ValueError("head roles: no sentence of the file could be read by the model")
        return {"n": self.n, "rule": ROLE_RULE, "heads": roles_of(self.tallies),
                "counts": {code: t.counts() for code, t in self.tallies.items()}}


def head_roles(engine: Engine, examples: Sequence[Example], batch_size: int = 16) -> dict[str, Any]:
    """Every head's figures and role over examples, teacher forcing in the model's trained setting:
    {"n": sentences used, "rule": ROLE_RULE, "heads": roles_of(...), "counts"}. Sentences the model cannot read
    are skipped; gold links are used where the example has them and its pieces group into its words. Traced
    batch_size examples at a time."""
    roles = RoleTallies(engine)
    for start in range(0, len(examples), batch_size):
        roles.add(examples[start:start + batch_size])
    return roles.result()
