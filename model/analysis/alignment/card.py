"""The head table of the Alignment page, measured once at training time and kept in card.json.

Scoring every cross-attention head on the first `CARD_HEADS_N` test sentences takes a few seconds of CPU
(teacher forcing, then every extraction x reading x head), and it does not depend on who opens the page: the
card keeps the tally's counts (`CARD_HEADS`) with a fingerprint of the sentences they were counted on. A
page that asks for the same sentences (same text and gold links, same number) gets the kept tally back; any
other request, or a card written for other sentences or another head layout, is computed as before.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from attention_lens.model.analysis.alignment.corpus import run_alignment
from attention_lens.model.analysis.alignment.methods import DEFAULT_METHOD, Method
from attention_lens.model.analysis.alignment.report import Report
from attention_lens.model.analysis.alignment.scoring import Tally

CARD_HEADS, CARD_HEADS_N = "alignment_heads", 100


def fingerprint(examples: Sequence[Any]) -> str:
    """sha256 of the sentences and gold links, one `source<TAB>target<TAB>gold` line each."""
    h = hashlib.sha256()
    for ex in examples:
        h.update(f"{ex.source}\t{ex.target}\t{ex.gold}\n".encode())
    return h.hexdigest()


def card_heads(engine, examples: Sequence[Any]) -> dict[str, Any]:
    """What card.json keeps: every counted method's (|A|, |S|, |A&S|, |A&P|) on these sentences."""
    report = run_alignment(engine, examples, DEFAULT_METHOD, progress=False)
    tally = report.tally
    entry: dict[str, Any] = {"n": len(examples), "fingerprint": fingerprint(examples),
                             "skipped": [[i, r] for i, r in report.skipped]}
    if tally is not None:
        entry.update(layers=tally.layers, heads=tally.heads, thresholds=list(tally.thresholds),
                     weights=tally.weights, n_scored=tally.n, methods=[m.name for m in tally.methods],
                     counts=tally.counts.tolist())
    return entry


def report_from_card(entry: Any, engine, examples: Sequence[Any]) -> Report | None:
    """The kept tally as a Report (no links: the page reads the tally only), or None when the card has none
    for exactly these sentences and this engine's head layout."""
    if not isinstance(entry, dict) or entry.get("n") != len(examples) or not entry.get("methods"):
        return None
    if entry.get("fingerprint") != fingerprint(examples):
        return None
    try:
        tally = Tally(int(entry["layers"]), int(entry["heads"]), tuple(float(t) for t in entry["thresholds"]),
                      str(entry["weights"]))
        counts = np.asarray(entry["counts"], dtype=np.int64)
        skipped = [(int(i), str(r)) for i, r in entry["skipped"]]
    except (KeyError, TypeError, ValueError):
        return None
    if ((tally.layers, tally.heads) != (engine.n_decoder_layers, engine.n_heads)
            or [m.name for m in tally.methods] != entry["methods"] or counts.shape != tally.counts.shape):
        return None
    tally.counts = counts
    tally.n = int(entry["n_scored"])
    return Report(tally if tally.n else None, {}, Method.parse(DEFAULT_METHOD), skipped, len(examples), tally.n)
