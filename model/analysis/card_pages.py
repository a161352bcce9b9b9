"""What a built-in pair's card keeps for the app's pages, measured once when the model is trained (or its card
updated by `eval --update-card`) so that no visitor waits for it: the Leakage lab's sample report
(model.analysis.leakage.CARD_SAMPLE) and the Alignment page's tally of every head
(model.analysis.alignment.card.CARD_HEADS), both on the first test sentences of the pair."""

from __future__ import annotations

from typing import Any

from attention_lens.model.analysis.alignment.card import CARD_HEADS, CARD_HEADS_N, card_heads
from attention_lens.model.analysis.leakage import CARD_SAMPLE, card_sample
from attention_lens.model.corpora import first_test_examples
from attention_lens.model.engine.contract import Engine


def card_pages(engine: Engine, pair: str) -> dict[str, Any]:
    """{CARD_SAMPLE: the sample report, CARD_HEADS: the heads' alignment tally} of a built-in pair's model."""
    return {CARD_SAMPLE: card_sample(engine, pair),
            CARD_HEADS: card_heads(engine, first_test_examples(pair, CARD_HEADS_N))}
