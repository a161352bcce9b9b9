"""`python -m model align --audio-data LIST.tsv [--timings GOLD]`: every cross-attention head of a speech model
ranked as a word timer against gold word timings (model.analysis.timing), a head set chosen or scored, written
as `alignment_heads` in a copy of the model's generation config; `--json` prints the report, shards add up with
`merge` (kind "align-audio")."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from attention_lens.model.engine.stream import Shard


def _ms(x: float | None) -> str:
    return "    -" if x is None else f"{x:5.0f}"


def _pct(x: float | None) -> str:
    return "   -" if x is None else f"{100 * x:3.0f}%"


def figures_line(label: str, f: dict[str, Any]) -> str:
    return (f"{label:22s} {_ms(f['median_start_error_ms'])} {_ms(f['mean_start_error_ms'])}   "
            f"{_pct(f['within_20ms'])}  {_pct(f['within_50ms'])}  {_pct(f['within_100ms'])}   {f['n_words']}")


def print_report(r: dict[str, Any], top: int = 10) -> None:
    """The text report: the reported set, the mean of all heads, the best heads, the worst clips, the breakdown."""
    sel = r["selection"]
    print(f"clips      {r['n_clips']} reported, {r['n_words']} words"
          + (f"; heads chosen on {sel['chosen_on']} clips ({sel['source']})" if sel["source"] != "given" else ""))
    print(f"alignment_heads {json.dumps(r['alignment_heads'])}  (layer, head; 0-based)")
    print("\nword starts            median   mean  <=20ms <=50ms <=100ms  words")
    print(figures_line("alignment_heads", r))
    print(figures_line("mean of all heads", r["mean_of_heads"]))
    for h in r["heads"][:top]:
        print(figures_line(f"head {h['layer']}:{h['head']}", h))
    if len(r["heads"]) > top:
        print(f"... {len(r['heads']) - top} more heads (--json has every one)")
    for step in sel.get("steps", []):
        print(f"  greedy step: {json.dumps(step['heads'])} mean error {step['mean_start_error_ms']:.1f} ms "
              f"on the selection clips")
    for group, rows in r["breakdown"].items():
        print(f"\nby {group.replace('_', ' ')}:")
        for row in rows:
            if row["n_words"]:
                print(figures_line(f"  {row['band']}", row))
    worst = r["clips"][:5]
    if worst:
        print("\nworst clips (line, clip, mean / max start error ms): "
              + "; ".join(f"{c['index']} {c['clip']} {c['mean_start_error_ms']:.0f} / {c['max_start_error_ms']}"
                          for c in worst))


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.analysis.timing.config import write_generation_config
    from attention_lens.model.analysis.timing.run import parse_heads, rank_clips
    from attention_lens.model.cli.common import open_model
    from attention_lens.model.engine.options import DecodeOptions

    shard = Shard.parse(args.shard)
    engine = open_model(args)
    heads = parse_heads(args.alignment_heads, engine.n_decoder_layers, engine.n_heads) if args.alignment_heads \
        else None
    options = DecodeOptions(language=args.language, task=args.task)
    result = rank_clips(engine, args.audio_data, args.timings, heads=heads, select_on=args.select_on, shard=shard,
                        batch_size=args.batch_size or 2, options=options, progress=not args.quiet,
                        model_name=args.model, token_rows=args.token_rows)
    if args.generation_config:
        write_generation_config(args.model, result["alignment_heads"], args.generation_config)
        print(f"wrote {args.generation_config}: alignment_heads {json.dumps(result['alignment_heads'])}",
              file=sys.stderr)
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        print_report(result)
    return 0


def add_options(p: argparse.ArgumentParser) -> None:
    """align's options for a speech model (the text options --data, --method, ... are not read with these)."""
    g = p.add_argument_group("a speech model's word timings (instead of --data)")
    g.add_argument("--audio-data", metavar="LIST.tsv",
                   help="clip path<TAB>transcript[<TAB>start-end per word] (paths absolute or relative to the list): "
                        "rank every cross-attention head as a word timer (Whisper's DTW) against gold word starts")
    g.add_argument("--timings", metavar="GOLD",
                   help="the gold word timings: a CTM file (utterance id = the clip's file name or stem), a folder "
                        "of TextGrids (<stem>.TextGrid, a 'words' tier, as MFA writes them) or one TextGrid; "
                        "default: the list's third column")
    g.add_argument("--alignment-heads", metavar="L:H,L:H",
                   help="score this head set (0-based layer:head, as generation_config.alignment_heads) instead of "
                        "choosing one (greedily, on --select-on or else the list's first half)")
    g.add_argument("--token-rows", choices=("reading", "predicting"), default="reading",
                   help="which decoder row times a token: the row that reads it (transformers' "
                        "return_token_timestamps, what a written alignment_heads is used with; the default) or the "
                        "row that predicts it, one earlier (openai/whisper's find_alignment)")
    g.add_argument("--generation-config", metavar="OUT.json",
                   help="write the model's generation_config.json with alignment_heads set to the reported set")
    if "--language" not in p._option_string_actions:  # the model options may already have the speech prompt's
        g.add_argument("--language", help="the spoken language forced in the prompt (a multilingual Whisper)")
    if "--task" not in p._option_string_actions:
        g.add_argument("--task", choices=("transcribe", "translate"), help="the task forced in the prompt")
