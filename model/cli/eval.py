"""`python -m model eval`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attention_lens.model.cli.common import add_model, add_speech, open_model

EVAL_BATCH = 64  # sentences per batch on the CPU when --batch-size is not given (a GPU takes up to 256)


def batch_size_of(args: argparse.Namespace, engine, need_weights: bool = False, cap_cpu: int = EVAL_BATCH) -> int:
    """--batch-size, or one chosen from the memory available (model.engine.stream.auto_batch_size) for lines of
    up to 64 tokens on each side, at most cap_cpu on the CPU and 256 on a GPU."""
    from attention_lens.model.engine.stream import MAX_AUTO_BATCH, attention_bytes_per_line, auto_batch_size

    if args.batch_size is not None:
        if args.batch_size < 1:
            raise ValueError("--batch-size must be at least 1")
        return args.batch_size
    device = str(getattr(args, "device", None) or "cpu")
    per_line = attention_bytes_per_line(engine.n_encoder_layers + engine.n_decoder_layers, engine.n_heads, 128,
                                        need_weights)
    return auto_batch_size(per_line, device, cap=MAX_AUTO_BATCH if device.startswith("cuda") else cap_cpu)


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.scores import EvalSums
    from attention_lens.model.engine import DecodeOptions
    from attention_lens.model.engine.stream import CorpusStream, Line, Shard, batches

    if args.audio_data is not None:
        from attention_lens.model.cli.eval_audio import run_audio

        return run_audio(args)
    shard = Shard.parse(args.shard)
    if args.update_card and args.split:
        raise ValueError("--update-card reads the split from --data; the card already holds --split's figures")
    if args.update_card and shard.count > 1:
        raise ValueError("--update-card needs the whole file: merge the shards first, without --update-card")
    engine = open_model(args)
    # Teacher forcing in the setting the model was trained with (its card), unless told otherwise.
    trained_causal, trained_shift = engine.trained_setting
    causal = trained_causal if args.causal is None else args.causal == "on"
    shift = trained_shift if args.shift is None else args.shift == "on"
    engine.check_switches(causal, shift)
    options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
    size = batch_size_of(args, engine)
    if args.split:
        rows = [Line(i, e.source, e.target) for i, e in enumerate(_own_split(engine.card, args.split), start=1)
                if shard.holds(i)]
        stream = batches(iter(rows), size, window=args.window)
    else:
        stream = CorpusStream(args.data, shard=shard, batch_size=size, window=args.window, desc="evaluating",
                              progress=not args.json)
    sums = EvalSums()
    for batch in stream:
        sums.add(engine, [x.source for x in batch], [x.target for x in batch], options)
    if not sums.n:
        raise ValueError(f"{args.data or args.split}: no sentence pairs" + (f" in shard {shard}" if shard.count > 1
                                                                              else ""))
    result = sums.result()
    result["merge"] = {"kind": "eval", "shard": str(shard), "model": args.model}
    if args.update_card:
        _update_card(Path(args.model), args.data, _figures(result), engine)
    if args.json:
        print(json.dumps(result))
    else:
        for k, v in _figures(result).items():
            print(f"{k:26s} {v:.4f}" if isinstance(v, float) else f"{k:26s} {v}")
        print(f"(teacher forcing with causal mask {'on' if causal else 'off'}, shift {'on' if shift else 'off'})",
              file=sys.stderr)
    return 0


def _figures(result: dict) -> dict:
    """The figures of an eval result without what a merge needs (counts, merge)."""
    return {k: v for k, v in result.items() if k not in ("counts", "merge")}


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
    from attention_lens.model.engine.stream import add_stream_options

    p = sub.add_parser(
        "eval", help="exact match, chrF, BLEU, teacher-forced accuracy and loss",
        description="Score a model on a file of sentence pairs: exact match, chrF and BLEU of its greedy "
                    "translations (sacrebleu, one reference), and its teacher-forced accuracy and loss. --split "
                    "test scores the pairs the model's own training held out.",
        epilog="""examples:
  %(prog)s --model checkpoints/en-fr --data assets/data/en-fr.test.tsv
  %(prog)s --model checkpoints/everyday-en-fr --split test --json
  %(prog)s --model checkpoints/spoken-grammar --audio-data clips/list.tsv --json""")
    add_model(p)
    add_speech(p)
    data = p.add_mutually_exclusive_group(required=True)
    data.add_argument("--data", help="source<TAB>target[<TAB>gold] per line")
    data.add_argument("--audio-data", metavar="LIST.tsv",
                      help="a speech model: clip path<TAB>transcript per line (paths relative to the list); prints "
                           "the word error rate of its greedy transcripts (wer, n, words, errors, failed, and each "
                           "clip's errors)")
    data.add_argument("--split", choices=("test", "valid"),
                      help="the split this model's own `train --data` held out (everyday models: the Tatoeba test)")
    p.add_argument("--causal", choices=("on", "off"), help="teacher-forcing mask (default: as trained)")
    p.add_argument("--shift", choices=("on", "off"), help="teacher-forcing shift (default: as trained)")
    p.add_argument("--json", action="store_true", help="print one JSON object on stdout")
    p.add_argument("--update-card", action="store_true", help="write the figures into the model's card.json")
    add_stream_options(p)
    p.set_defaults(func=run)
