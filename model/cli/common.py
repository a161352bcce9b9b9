"""What several commands share: the model options (--model, --allow-hub) and opening the model they name, the
three bug switches of a run (`trace`, `probe`), and reading a file of sentence pairs. Heavy modules are imported
when a command runs, so `--help` stays quick."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from attention_lens.model.corpora import Example
    from attention_lens.model.engine import Engine


def add_model(p: argparse.ArgumentParser) -> None:
    """--model (required), --allow-hub, where the model runs (--device, --dtype: model.engine.device) and a
    multilingual model's languages (--src-lang, --tgt-lang: Engine.with_languages)."""
    p.add_argument("--model", required=True, help="checkpoint folder (ours) or Hugging Face model folder / hub id")
    p.add_argument("--allow-hub", action="store_true", help="allow downloading a hub id (needs the network)")
    p.add_argument("--device", default="auto", metavar="auto|cpu|cuda[:N]|mps",
                   help="where the model runs (default auto: the GPU when torch sees one, else the CPU); a device "
                        "that is not there is an error")
    p.add_argument("--dtype", default="float32", choices=("float32", "float16", "bfloat16"),
                   help="the weights' float type (default float32); float16 / bfloat16 halve the memory, and "
                        "move attention weights by a little (docs/your-model.md gives the measured difference)")
    p.add_argument("--src-lang", metavar="CODE", help="a multilingual model (NLLB, M2M-100, mBART-50): the source "
                                                      "language code, e.g. eng_Latn, en, en_XX")
    p.add_argument("--tgt-lang", metavar="CODE", help="a multilingual model: the target language code, forced as "
                                                      "the first generated token, e.g. fra_Latn, fr, fr_XX")


def add_speech(p: argparse.ArgumentParser) -> None:
    """--language and --task of a speech model (DecodeOptions.language / task: Whisper's forced prefix)."""
    p.add_argument("--language", metavar="CODE", help="a speech model (Whisper): the spoken language, e.g. en, de "
                                                      "(default: the model's generation config, else en)")
    p.add_argument("--task", choices=("transcribe", "translate"),
                   help="a speech model (Whisper): transcribe, or translate into English (default: transcribe)")


def add_bug_switches(p: argparse.ArgumentParser, note: str, meters: bool = False) -> None:
    """--mask-after-softmax, --swap-cross, --no-scaling (DecodeOptions.mask_after_softmax, swap_cross, unscaled),
    each with its one-line account (model.engine.bugs.EXPLAIN); `note` ends the group's description; `meters`:
    each flag's help also names what trace's stderr line measures."""
    from attention_lens.model.engine.bugs import EXPLAIN

    meter = {"mask_after_softmax": " Meter: the decoder self-attention's row sums and the weight left on later "
                                   "positions.",
             "swap_cross": " Meter: the weight the source queries put on later target positions.",
             "unscaled": " Meter: the mean row entropy and largest weight of each kind, against the same run with "
                         "the scaling."} if meters else {}
    bugs = p.add_argument_group(
        "silent bugs", "three more bugs of the references, each an argument of this run (the loaded model is never "
        "changed); our built-in models compute them, Hugging Face models refuse them with the reason. " + note)
    bugs.add_argument("--mask-after-softmax", action="store_true",
                      help=EXPLAIN["mask_after_softmax"] + meter.get("mask_after_softmax", ""))
    bugs.add_argument("--swap-cross", "--swap-cross-attention", dest="swap_cross", action="store_true",
                      help=EXPLAIN["swap_cross"] + " Runs only when source and target have as many tokens (give "
                           "--target); otherwise the error a student would get." + meter.get("swap_cross", ""))
    bugs.add_argument("--no-scaling", "--unscaled", dest="unscaled", action="store_true",
                      help=EXPLAIN["unscaled"] + meter.get("unscaled", ""))


def bug_names(args: argparse.Namespace) -> tuple[str, ...]:
    """The bug switches given on the command line (add_bug_switches), as DecodeOptions field names."""
    from attention_lens.model.engine.bugs import BUGS

    return tuple(name for name in BUGS if getattr(args, name))


def open_model(args: argparse.Namespace) -> Engine:
    """The engine of args.model (model.engine.loader.load_engine; a hub id only with --allow-hub)."""
    from attention_lens.model.engine.loader import load_engine

    engine = load_engine(args.model, allow_hub=args.allow_hub, device=args.device, dtype=args.dtype)
    return engine.with_languages(args.src_lang, args.tgt_lang)


def read_pairs(path: str, limit: int = 0) -> list[Example]:
    """The sentence pairs of a TSV file with their gold links checked (model.analysis.alignment's gold_lines: a
    bad line, or a link outside its sentence, is a ValueError naming the file and line), the first `limit` of
    them when limit > 0; ValueError for a file without any."""
    from attention_lens.model.analysis.alignment.corpus_stream import gold_lines
    from attention_lens.model.corpora import Example

    rows = [Example(line.source, line.target, line.gold) for line, _ in gold_lines(path)]
    if not rows:
        raise ValueError(f"{path}: no sentence pairs")
    return rows[:limit] if limit else rows
