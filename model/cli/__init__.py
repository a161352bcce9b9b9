"""`python -m model <command>`: train, trace, eval, align, probe, corpus (docs/formats.md).

This module holds the parser and `trace` (`trace_data`: its --data form); every other command is one module here
(`train`, `eval`, `corpus`, `probe`, `align`, `heads`) with a `register(subparsers)`, listed in `commands`;
`common` holds what several of them share (the model options, the three bug switches of `trace` and `probe`,
reading a file of pairs).
`aligner` (the statistical aligner and `symmetrise`) and `merge` (the shards of one file added up) are
commands too.
`align_audio` is `align --audio-data`: a speech model's heads ranked as word timers.
`trace_audio` is `trace --audio` and a speech model's `trace --data` (a clip list); `eval_audio` is
`eval --audio-data` (the word error rate).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from attention_lens.model.cli.common import add_bug_switches, add_model, add_speech, open_model
from attention_lens.model.engine import CheckpointError, DecodeOptions, ModelInputError

if TYPE_CHECKING:
    from attention_lens.model.engine import Engine, Trace


def cmd_trace(args: argparse.Namespace) -> int:
    from attention_lens.model.cli.trace_data import read_stdin_or, trace_data

    engine = open_model(args)
    # One set of options for both forms; with --data a line with a target is teacher-forced on it (trace_batch).
    options = DecodeOptions(mode="teacher_forced" if args.target and args.data is None else args.decode,
                            causal=not args.no_causal_mask, shift=not args.no_shift, beam_size=args.beam,
                            temperature=args.temperature, top_k=args.top_k, seed=args.seed, max_len=args.max_len,
                            ablate=tuple(args.ablate), contributions=args.contributions, lens=args.lens,
                            saliency=args.saliency, mask_after_softmax=args.mask_after_softmax,
                            swap_cross=args.swap_cross, unscaled=args.unscaled, language=args.language,
                            task=args.task)
    engine.check_bugs(options)  # a switch this family cannot compute: one error, not one per line of --data
    if args.audio is not None or (args.data is not None and engine.source_kind == "audio"):
        from attention_lens.model.cli.trace_audio import trace_clip, trace_clips

        if args.data is not None:  # a speech model's --data is a list of clips
            return trace_clips(engine, args.data, Path(args.out), options)
        return trace_clip(engine, args.audio, args.target, options, Path(args.out))
    if args.data is not None:
        from attention_lens.model.engine.stream import Shard

        return trace_data(engine, args.data, Path(args.out), options, args.batch_size, Shard.parse(args.shard),
                          args.window)
    text = read_stdin_or(args.text)
    try:
        trace = engine.trace(text, target=args.target, options=options)
    except ModelInputError as exc:
        if options.swap_cross and not args.target and "swapped" in str(exc):
            raise ModelInputError(f"{exc} Free-running decoding has one decoder row at its first step, so the swap "
                                  f"fails there on any source of more than one token: give --target with as many "
                                  f"tokens as the source to see it run.") from exc
        raise
    trace.save(Path(args.out))
    for w in trace.warnings:
        print(f"warning: {w}", file=sys.stderr)
    print(f"wrote {args.out}: {trace.n} source tokens, {trace.m} decoder rows -> "
          f"{' '.join(trace.target_tokens)}", file=sys.stderr)
    for line in bug_meters(engine, trace, text, args.target, options):
        print(line, file=sys.stderr)
    return 0


def bug_meters(engine: Engine, trace: Trace, text: str, target: str | None, options: DecodeOptions) -> list[str]:
    """One line per bug switch that is on, measured on the trace just written (model.analysis.bug_meters): the
    decoder self-attention's row sums and the weight on the future, what the swapped "cross-attention" attends
    to, and the rows' entropy and largest weight against the same run without the switch."""
    from dataclasses import replace

    from attention_lens.model.analysis.bug_meters import row_sums, sharpness, swap_meter

    lines = []
    if options.mask_after_softmax:
        meter = row_sums(trace)
        lines.append(f"mask after the softmax: decoder self-attention rows sum to between "
                     f"{meter.min_sum:.3f} and {float(meter.sums.max()):.3f} (mean share lost "
                     f"{meter.mean_missing:.3f}); largest weight on a later position {meter.max_future:.3g}")
    if options.swap_cross:
        meter = swap_meter(trace)
        lines.append(f"cross-attention swapped: {trace.n} source queries over {trace.m} target keys; weight on "
                     f"target positions after the row's own: mean {meter.mean_future:.3f}, largest "
                     f"{meter.max_future:.3f}")
    if options.unscaled and engine.card.get("variant") == "no-scaling":
        lines.append("no 1/sqrt(d_k) scaling: this model was trained without the scaling and always runs without "
                     "it, so the switch changes nothing here")
    elif options.unscaled:
        healthy = engine.trace(text, target=target, options=replace(options, unscaled=False))
        bug, base = sharpness(trace), sharpness(healthy)
        for kind in bug.entropy:
            lines.append(f"no 1/sqrt(d_k) scaling, {kind.replace('_', ' ')}: mean row entropy "
                         f"{bug.entropy[kind]:.3f} nats (healthy {base.entropy[kind]:.3f}), mean largest weight "
                         f"{bug.top_weight[kind]:.3f} (healthy {base.top_weight[kind]:.3f})")
    return lines


# What --help says, for people who use the commands (the module's docstring is for people who change them).
DESCRIPTION = ("See inside an encoder-decoder translation model: trace a run's attention, train and evaluate "
               "models, read word alignments off cross-attention, rank heads, and probe for label leakage. --model "
               "takes a checkpoint folder of this project (checkpoints/everyday-en-fr) or a Hugging Face "
               "encoder-decoder folder (Marian, T5, BART, mBART, Pegasus, M2M-100, NLLB).")
EPILOG = """examples:
  %(prog)s trace --model checkpoints/everyday-en-fr --text "Where is the train station?" --out t.json
  %(prog)s eval --model checkpoints/en-fr --data assets/data/en-fr.test.tsv
  %(prog)s COMMAND --help      what one command does, its options and an example

Every command and option: docs/command-line.md."""


class UserHelp(argparse.HelpFormatter):
    """Descriptions wrapped to the terminal; a paragraph with indented lines (the examples) kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n\n".join("\n".join(indent + line for line in part.splitlines()) if "\n  " in part
                            else super(UserHelp, self)._fill_text(part, width, indent) for part in text.split("\n\n"))


def build_parser(prog: str = "python -m model") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=DESCRIPTION, epilog=EPILOG, formatter_class=UserHelp)
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND")

    p = sub.add_parser(
        "trace", help="translate a sentence and write every attention weight it computed as a Trace file",
        description="Translate one sentence and write everything the model computed as a Trace (.json or .npz; "
                    "docs/formats.md): the source and target tokens, each step's most likely next tokens, and the "
                    "attention weights of every layer and head (encoder self-attention, decoder self-attention, "
                    "cross-attention). With --target the model reads a reference translation instead of decoding "
                    "(teacher forcing), where --no-causal-mask and --no-shift show label leakage. With --data, one "
                    "Trace per line of a file. The Python API takes the same options: "
                    "attention_lens.load(M).trace(text, **options).",
        epilog="""examples:
  %(prog)s --model checkpoints/everyday-en-fr --text "Where is the train station?" --out t.json
  %(prog)s --model checkpoints/en-fr --text "the cat sat ." --decode beam --beam 5 --out beam.json
  %(prog)s --model checkpoints/en-fr --text "the cat sat ." --target "le chat s' assit ." --no-causal-mask --out t.json
  %(prog)s --model checkpoints/en-fr --data assets/data/en-fr.test.tsv --out traces/
  %(prog)s --model checkpoints/spoken-grammar --audio clip.flac --out t.json
  %(prog)s --model whisper-tiny --audio clip.wav --language de --task translate --out t.json""")
    add_model(p)
    add_speech(p)
    given = p.add_mutually_exclusive_group(required=True)
    given.add_argument("--text", help="the source sentence; - reads it from standard input")
    given.add_argument("--data", help="a TSV of source[<TAB>target] lines (- for standard input): one trace per "
                                      "line into the folder --out, 0001.json, ...; for a speech model a list of "
                                      "clip path[<TAB>transcript] lines (paths relative to the list)")
    given.add_argument("--audio", metavar="CLIP", help="a speech model (Whisper): the clip to transcribe (WAV, "
                                                       "FLAC, OGG, MP3; any rate, mixed down to 16 kHz mono)")
    p.add_argument("--batch-size", type=int, default=16, help="lines run together with --data")
    p.add_argument("--shard", metavar="K/N", help="with --data: only shard K of N, the lines whose number i has "
                                                  "(i - 1) mod N == K - 1 (the trace files keep the line numbers)")
    p.add_argument("--window", type=int, default=2048, help="with --data: lines read ahead and sorted by length "
                                                            "before batching (memory grows with this, not the file)")
    p.add_argument("--target", help="reference target (a speech model: the transcript): one teacher-forced pass "
                                    "instead of decoding")
    p.add_argument("--decode", choices=("greedy", "beam", "sample"), default="greedy")
    p.add_argument("--beam", type=int, default=4)
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-len", type=int)
    p.add_argument("--no-causal-mask", action="store_true",
                   help="teacher forcing without the decoder's causal mask (free running cannot see the future)")
    p.add_argument("--no-shift", action="store_true", help="teacher forcing without the right shift of the target")
    add_bug_switches(p, "A line on stderr measures the effect (model.analysis.bug_meters).", meters=True)
    p.add_argument("--ablate", action="append", default=[], metavar="KIND:LAYER:HEAD",
                   help="switch a head off (KIND enc|dec|cross, 1-based, * = all); repeatable")
    p.add_argument("--contributions", action="store_true", help="add the contributions object to the Trace")
    p.add_argument("--lens", action="store_true", help="add the logit lens of every decoder row (the lens object)")
    p.add_argument("--saliency", action="store_true",
                   help="add every row's integrated gradients / input x gradient and their agreement with each "
                        "cross-attention head (the saliency object)")
    p.add_argument("--out", required=True, help="the trace file; with --data, a folder")
    p.set_defaults(func=cmd_trace)

    from attention_lens.model.cli.commands import REGISTRY

    for register in REGISTRY:
        register(sub)
    for command in sub.choices.values():  # every command's --help: its description wrapped, its examples as written
        command.formatter_class = UserHelp
    return parser


def main(argv: list[str] | None = None, prog: str = "python -m model") -> int:
    parser = build_parser(prog)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except (CheckpointError, ModelInputError, ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
