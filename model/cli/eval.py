"""`python -m model eval`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attention_lens.model.cli.common import add_model, open_model, read_pairs


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.scores import evaluate

    engine = open_model(args)
    if args.split:
        rows = _own_split(engine.card, args.split)
    elif args.data:
        rows = read_pairs(args.data)
    else:
        raise ValueError("give --data FILE.tsv, or --split test|valid for a model trained with train --data")
    # Teacher forcing in the setting the model was trained with (its card), unless told otherwise.
    trained_causal, trained_shift = engine.trained_setting
    causal = trained_causal if args.causal is None else args.causal == "on"
    shift = trained_shift if args.shift is None else args.shift == "on"
    result = evaluate(engine, [r.source for r in rows], [r.target for r in rows], causal, shift,
                      progress=not args.json)
    if args.update_card and args.split:
        raise ValueError("--update-card reads the split from --data; the card already holds --split's figures")
    if args.update_card:
        _update_card(Path(args.model), args.data, result, engine)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in result.items():
            print(f"{k:26s} {v:.4f}" if isinstance(v, float) else f"{k:26s} {v}")
        print(f"(teacher forcing with causal mask {'on' if causal else 'off'}, shift {'on' if shift else 'off'})",
              file=sys.stderr)
    return 0


def _own_split(card: dict, name: str) -> list:
    """The valid or test split `train --data FILE --seed S` held out (model.corpora.grouped_split)."""
    from attention_lens.model.corpora import Example
    from attention_lens.model.corpora.grouped_split import held_out_split

    if not isinstance(card.get("data"), str):
        raise ValueError("--split needs a model trained with train --data (its card names the file and seed); "
                         "for a built-in pair use --data assets/data/PAIR.test.tsv")
    return [Example(s, t, "") for s, t in held_out_split(card["data"], int(card.get("seed", 0)))[name]]


def _update_card(folder: Path, data: str, result: dict, engine) -> None:
    """Record the figures as the card's test-split metrics (and measure again what the card keeps for the app's
    pages: model.analysis.card_pages), or, for a combination split `PAIR.combo-NAME.tsv`, as
    `combination_metrics[NAME]`."""
    from attention_lens.model.analysis.card_pages import card_pages
    from attention_lens.model.analysis.scores import rounded

    card_path = folder / "card.json"
    if not card_path.is_file():
        raise ValueError(f"{folder} has no card.json to update")
    card = json.loads(card_path.read_text())
    metrics = rounded(result)
    split = Path(data).stem.partition(".")[2]
    if split.startswith("combo-"):
        card.setdefault("combination_metrics", {})[split.removeprefix("combo-")] = metrics
    else:
        card["test_metrics"] = metrics
        card["test_data"] = Path(data).name
        if "pair" in card:
            card.update(card_pages(engine, card["pair"]))
    card_path.write_text(json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "eval", help="exact match, chrF, BLEU, teacher-forced accuracy and loss",
        description="Score a model on a file of sentence pairs: exact match, chrF and BLEU of its greedy "
                    "translations (sacrebleu, one reference), and its teacher-forced accuracy and loss. --split "
                    "test scores the pairs the model's own training held out.",
        epilog="""examples:
  %(prog)s --model checkpoints/en-fr --data assets/data/en-fr.test.tsv
  %(prog)s --model checkpoints/everyday-en-fr --split test --json""")
    add_model(p)
    data = p.add_mutually_exclusive_group(required=True)
    data.add_argument("--data", help="source<TAB>target[<TAB>gold] per line")
    data.add_argument("--split", choices=("test", "valid"),
                      help="the split this model's own `train --data` held out (everyday models: the Tatoeba test)")
    p.add_argument("--causal", choices=("on", "off"), help="teacher-forcing mask (default: as trained)")
    p.add_argument("--shift", choices=("on", "off"), help="teacher-forcing shift (default: as trained)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--update-card", action="store_true", help="write the figures into the model's card.json")
    p.set_defaults(func=run)
