"""What a model's card keeps for the app's pages, measured once when the model is trained (or its card updated
by `eval --update-card`, or by this module's command for the Leakage lab's sample) so that no visitor waits for
it: the Leakage lab's sample report (model.analysis.leakage.CARD_SAMPLE) and the Alignment page's tally of every
head (model.analysis.alignment.card.CARD_HEADS), both on the first sentences of the model's own test split.

A built-in pair's model keeps both (its test split has gold links); a model trained on a file of its own
(`train --data`, the everyday models) keeps the sample report, measured on the test split that training held out
(model.corpora.grouped_split), the same sentences the app measures it on. `train` writes them at its end; this
module's command measures the sample for a model folder trained before train wrote it:

    python -m model.analysis.card_pages checkpoints/everyday-en-fr checkpoints/everyday-en-fr-no-shift
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from attention_lens.model.analysis.alignment.card import CARD_HEADS, CARD_HEADS_N, card_heads
from attention_lens.model.analysis.leakage import CARD_SAMPLE, CARD_SAMPLE_N, card_sample, sample_report
from attention_lens.model.corpora import PAIRS, Example, first_test_examples
from attention_lens.model.engine.contract import Engine


def card_pages(engine: Engine, pair: str) -> dict[str, Any]:
    """{CARD_SAMPLE: the sample report, CARD_HEADS: the heads' alignment tally} of a built-in pair's model."""
    return {CARD_SAMPLE: card_sample(engine, pair),
            CARD_HEADS: card_heads(engine, first_test_examples(pair, CARD_HEADS_N))}


def trained_on_a_file(card: dict[str, Any]) -> bool:
    """A model trained on a file of raw text (`train --data`): its test split is the one training held out."""
    return isinstance(card.get("data"), str) and card.get("text") == "raw"


def own_test_examples(card: dict[str, Any], n: int) -> list[Example] | None:
    """The first n pairs of the test split a card's model was measured on: for a model trained on a file of raw
    text (`train --data`), the split that training held out; for a built-in pair, its generated test split;
    None for a card that names neither (a Hugging Face model)."""
    if trained_on_a_file(card):
        from attention_lens.model.corpora.grouped_split import held_out_split

        test = held_out_split(card["data"], int(card.get("seed", 0)))["test"][:n]
        return [Example(s, t, "") for s, t in test]
    if card.get("pair") in PAIRS:
        return first_test_examples(card["pair"], n)
    return None


def sample_of_examples(engine: Engine, examples: Sequence[Example]) -> dict[str, Any]:
    """CARD_SAMPLE measured on these pairs (the first CARD_SAMPLE_N of them), in the setting the engine was
    trained in."""
    examples = list(examples)[:CARD_SAMPLE_N]
    causal, shift = engine.trained_setting
    return sample_report(engine, [e.source for e in examples], [e.target for e in examples], causal,
                         shift).to_card()


def update_sample(folder: Path) -> dict[str, Any]:
    """Measure the Leakage lab's sample of the model in `folder` on its own test split and write it into its
    card.json (other keys untouched). Returns what was written."""
    from attention_lens.model.engine import load_engine

    card_path = Path(folder) / "card.json"
    engine = load_engine(str(folder))
    examples = own_test_examples(engine.card, CARD_SAMPLE_N)
    if not examples:
        raise ValueError(f"{folder}: its card names no test split (neither a built-in pair nor `train --data`)")
    kept = sample_of_examples(engine, examples)
    card = json.loads(card_path.read_text(encoding="utf-8"))
    card[CARD_SAMPLE] = kept
    card_path.write_text(json.dumps(card, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")  # keys in place
    return kept


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m model.analysis.card_pages",
        description="Measure the Leakage lab's test-split sample of each model folder and keep it in its card.json "
                    "(for a checkpoint trained before its card kept it).")
    parser.add_argument("folders", nargs="+", type=Path, help="checkpoint folders (each with a card.json)")
    args = parser.parse_args(argv)
    for folder in args.folders:
        try:
            kept = update_sample(folder)
        except (OSError, ValueError) as exc:
            print(f"{folder}: {exc}", file=sys.stderr)
            return 1
        print(f"{folder}: {CARD_SAMPLE} on {kept['n']} test pairs, exact match {kept['exact_match']:.3f}, "
              f"teacher-forced accuracy {kept['teacher_forced_accuracy']:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
