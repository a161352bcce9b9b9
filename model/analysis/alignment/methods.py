"""Extracting links from a word-attention matrix, and the method names that say how
(`extract-reading-selector[-weights]`, e.g. `argmax-shift-L2H1`, `union-plain-mean-norm`).

Weights: `raw` (the cross-attention weights, no suffix), `norm` (norm-weighted, alpha * ||v W_O^h||,
Kobayashi et al. 2020) or `rollout` (cross-attention composed with the encoder's rollout, Abnar & Zuidema
2020), both from attention_lens.model.engine.contributions, or `saliency` (the gradient reading, Ding et al.
2019: model.analysis.alignment.gradient), which has no heads or layers, so only the `mean` selector.

`best` chooses among every method on every weights (`best-raw`, `best-norm`, `best-rollout`, `best-saliency`:
among those of one weights)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.links import Link
from attention_lens.model.analysis.alignment.words import READINGS, WordAttention

EXTRACTS = ("argmax", "threshold", "inter", "union")
DEFAULT_THRESHOLD = 0.3
# Chosen on the valid splits of the shipped en-fr and de-en models (never on their test splits): the plain
# reading beat the shift-aware one by far there, and the union of both argmax directions over the mean of
# every head was the best choice that needs no head selection (AER 0.07 / 0.10).
DEFAULT_READING = "plain"
DEFAULT_METHOD = "union-plain-mean"
BEST = "best"  # every weights; best-raw / best-norm / best-rollout / best-saliency: the best method on those
WEIGHTS = ("raw", "norm", "rollout", "saliency")
HEADLESS = frozenset({"saliency"})  # weights read off the whole model, not per head: only the `mean` selector
CONTRIBUTION_KEYS = {"norm": "norm_weighted", "rollout": "rollout"}  # the Trace's contributions groups
SEARCH_THRESHOLDS = (0.1, 0.2, 0.3, 0.4, 0.5)  # the thresholds `best` tries


def _onehot_argmax(w: np.ndarray, axis: int) -> np.ndarray:
    """Boolean (…, m, n): True at the argmax along `axis`, where that line has any weight."""
    idx = np.expand_dims(w.argmax(axis=axis), axis)
    out = np.zeros(w.shape, dtype=bool)
    np.put_along_axis(out, idx, True, axis=axis)
    return out & (w.max(axis=axis, keepdims=True) > 0)


def extract(w: np.ndarray, how: str, threshold: float = DEFAULT_THRESHOLD) -> np.ndarray:
    """w (…, m_words, n_words) -> boolean links of the same shape ([target word, source word])."""
    if how == "argmax":
        return _onehot_argmax(w, -1)
    if how == "threshold":
        return w >= threshold
    if how == "inter":
        return _onehot_argmax(w, -1) & _onehot_argmax(w, -2)
    if how == "union":
        return _onehot_argmax(w, -1) | _onehot_argmax(w, -2)
    raise ValueError(f"extraction must be one of {EXTRACTS}, got {how!r}")


def links_of(mask: np.ndarray) -> list[Link]:
    """Boolean (m_words, n_words) -> [(source, target), ...]."""
    return [(int(s), int(t)) for t, s in zip(*np.nonzero(mask))]


@dataclass(frozen=True)
class Method:
    extract: str = "argmax"
    reading: str = DEFAULT_READING
    layer: int | None = None  # 1-based; None: the mean over layers
    head: int | None = None  # 1-based; None: the mean over the layer's heads
    threshold: float = DEFAULT_THRESHOLD
    weights: str = "raw"

    def __post_init__(self) -> None:
        if self.weights not in WEIGHTS:
            raise ValueError(f"weights must be one of {WEIGHTS}, got {self.weights!r}")
        if self.extract not in EXTRACTS:
            raise ValueError(f"extraction must be one of {EXTRACTS}, got {self.extract!r}")
        if self.reading not in READINGS:
            raise ValueError(f"reading must be one of {READINGS}, got {self.reading!r}")
        if self.head is not None and self.layer is None:
            raise ValueError("a head needs a layer")
        if not 0 < self.threshold <= 1:
            raise ValueError(f"threshold must be in (0, 1], got {self.threshold}")
        if self.weights in HEADLESS and self.layer is not None:
            raise ValueError(f"the {self.weights} reading has no heads or layers: use the mean selector (e.g. "
                             f"argmax-plain-mean-{self.weights})")

    @property
    def selector(self) -> str:
        if self.layer is None:
            return "mean"
        return f"layer{self.layer}" if self.head is None else f"L{self.layer}H{self.head}"

    @property
    def name(self) -> str:
        how = f"threshold{self.threshold:g}" if self.extract == "threshold" else self.extract
        return f"{how}-{self.reading}-{self.selector}" + ("" if self.weights == "raw" else f"-{self.weights}")

    def check(self, layers: int, heads: int) -> None:
        if self.layer is not None and not 1 <= self.layer <= layers:
            raise ValueError(f"{self.name}: layer must be 1..{layers} (1-based)")
        if self.head is not None and not 1 <= self.head <= heads:
            raise ValueError(f"{self.name}: head must be 1..{heads} (1-based)")

    def links(self, wa: WordAttention) -> list[Link]:
        return links_of(extract(wa.matrix(self.reading, self.layer, self.head), self.extract, self.threshold))

    @classmethod
    def parse(cls, name: str) -> Method:
        """`argmax-shift-L2H1`, `threshold0.2-plain-layer2`, `union-mean`, `argmax` ... (parts after the
        extraction are optional: reading defaults to DEFAULT_READING, the selector to `mean`)."""
        parts = name.strip().split("-")
        weights = parts.pop() if len(parts) > 1 and parts[-1] in WEIGHTS else "raw"
        match = re.fullmatch(r"(argmax|inter|union|threshold)([0-9.]*)", parts[0])
        if not match or (match.group(2) and match.group(1) != "threshold") or len(parts) > 3:
            raise ValueError(f"unknown method {name!r}: expected EXTRACT[-READING][-SELECTOR] with EXTRACT one of "
                             f"argmax, threshold[TAU], inter, union; READING plain or shift; SELECTOR LxHy, layerN "
                             f"or mean (e.g. argmax-shift-L2H1), or 'best'")
        kw: dict[str, Any] = {"extract": match.group(1), "weights": weights}
        if match.group(2):
            try:
                kw["threshold"] = float(match.group(2))
            except ValueError:
                raise ValueError(f"{name!r}: bad threshold {match.group(2)!r}") from None
        rest = parts[1:]
        if rest and rest[0] in READINGS:
            kw["reading"] = rest.pop(0)
        if rest:
            sel = rest.pop(0)
            head = re.fullmatch(r"L(\d+)H(\d+)", sel)
            layer = re.fullmatch(r"layer(\d+)", sel)
            if head:
                kw["layer"], kw["head"] = int(head.group(1)), int(head.group(2))
            elif layer:
                kw["layer"] = int(layer.group(1))
            elif sel != "mean":
                raise ValueError(f"{name!r}: selector {sel!r} is not LxHy, layerN or mean (or the reading is not "
                                 f"plain / shift)")
        if rest:
            raise ValueError(f"{name!r}: unexpected {'-'.join(rest)!r}")
        return cls(**kw)


def selectors(layers: int, heads: int) -> list[tuple[int | None, int | None]]:
    """(layer, head), 1-based, in WordAttention.stacked order: every head, every layer mean, the overall mean."""
    return ([(li, hi) for li in range(1, layers + 1) for hi in range(1, heads + 1)]
            + [(li, None) for li in range(1, layers + 1)] + [(None, None)])


def candidates(layers: int, heads: int, thresholds: Sequence[float] = SEARCH_THRESHOLDS,
               weights: str = "raw") -> list[Method]:
    """Every method the scorer counts at once: extractions (thresholds as given) x readings x selectors
    (only `mean` for HEADLESS weights), on the given weights."""
    extracts = [("argmax", DEFAULT_THRESHOLD), ("inter", DEFAULT_THRESHOLD), ("union", DEFAULT_THRESHOLD)]
    extracts += [("threshold", t) for t in thresholds]
    chosen = [(None, None)] if weights in HEADLESS else selectors(layers, heads)
    return [Method(e, r, li, hi, t, weights) for e, t in extracts for r in READINGS for li, hi in chosen]


def searched_weights(method: str) -> tuple[str, ...]:
    """The weights a method name reads: one for a method, every WEIGHTS for `best`, one for best-WEIGHTS."""
    if method.startswith(BEST):
        rest = method[len(BEST):]
        if not rest:
            return WEIGHTS
        if rest[1:] not in WEIGHTS or rest[0] != "-":
            raise ValueError(f"{method!r}: best takes -raw, -norm, -rollout or -saliency, nothing else")
        return (rest[1:],)
    return (Method.parse(method).weights,)


def weights_of(method: str) -> str:
    """The weights a method name (or best-WEIGHTS) reads; `best` reads every weights and has none."""
    searched = searched_weights(method)
    if len(searched) != 1:
        raise ValueError(f"{method!r} searches every weights ({', '.join(searched)})")
    return searched[0]
