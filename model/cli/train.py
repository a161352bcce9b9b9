"""`python -m model train`."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def load_rows(args: argparse.Namespace) -> tuple[dict, dict]:
    """The splits to train on, and what the card should say about them."""
    if args.data:
        from attention_lens.model.corpora import read_tsv
        from attention_lens.model.corpora.grouped_split import split_by_sentence

        rows = [(e.source, e.target) for e in read_tsv(Path(args.data))]
        name = Path(args.data).name.removesuffix(".gz").removesuffix(".tsv")
        return split_by_sentence(rows, args.seed), {"pair": name, "data": str(args.data)}
    from attention_lens.model.corpora import generate

    splits = generate(args.pair, seed=args.corpus_seed, n_train=args.train_pairs)
    return ({k: [(e.source, e.target) for e in v] for k, v in splits.items()},
            {"pair": args.pair, "corpus_seed": args.corpus_seed})


# A size and schedule for a few minutes of one GPU (benchmarks/gpu_train_everyday.py): 4 + 4 layers x 8 heads
# (the app's pictures stay readable: at most 6 x 8 per stack), d_model 256, batches of 12,000 padded tokens,
# mixed precision; 13.5 M parameters, 27 MB in float16 (both everyday models come back in one device call). Flags
# given on the command line win.
PRESETS = {
    "gpu-minutes": {"d_model": 256, "heads": 8, "layers": 4, "d_ff": 1024, "batch_tokens": 12000, "lr": 1e-3,
                    "warmup": 800, "steps": 200000, "eval_every": 2000, "time_budget": 4.0, "vocab_size": 8000,
                    "ema": 0.999, "device": "auto"},
    # the same schedule's shape in seconds on the CPU, for rehearsing the GPU script (tests/builtin/test_train_device)
    "cpu-rehearsal": {"d_model": 32, "heads": 8, "layers": 2, "d_ff": 64, "batch_tokens": 600, "lr": 1e-3,
                      "warmup": 10, "steps": 30, "eval_every": 15, "time_budget": 0.0, "vocab_size": 300,
                      "ema": 0.0, "device": "cpu", "valid_sample": 20},
}


def apply_preset(args: argparse.Namespace) -> None:
    """Every flag a preset may set and the command line did not give (None after parsing) takes the preset's
    value, or else its own default (register keeps them in args.defaults): a flag given always wins."""
    preset = PRESETS.get(args.preset or "", {})
    for key, default in args.defaults.items():
        if getattr(args, key) is None:
            setattr(args, key, preset.get(key, default))


def run(args: argparse.Namespace) -> int:
    from attention_lens.model.training.train import TrainConfig, train

    apply_preset(args)
    asked = {"d_model": args.d_model, "n_heads": args.heads, "n_encoder_layers": args.layers,
             "n_decoder_layers": args.layers, "dropout": args.dropout,
             "d_ff": args.d_ff or (4 * args.d_model if args.d_model else None)}
    tc = TrainConfig(variant=args.variant, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                     seed=args.seed, eval_every=args.eval_every,
                     architecture={k: v for k, v in asked.items() if v is not None},
                     warmup=args.warmup, em_sample=args.valid_sample,
                     dtype=args.dtype, vocab_size=args.vocab_size, time_budget=60 * args.time_budget,
                     threads=args.threads, ema=args.ema,
                     init_from=args.init_from or "",
                     align_links=args.align_links or "", align_layer=args.align_layer, align_head=args.align_head,
                     align_weight=args.align_weight, align_reading=args.align_reading,
                     align_extra=args.align_extra or "", align_extra_links=args.align_extra_links or "",
                     align_extra_translation=not args.align_extra_alignment_only,
                     distill_from=args.distill_from or "", distill_weight=args.distill_weight,
                     raw_text=(args.text or ("raw" if args.data else "conventions")) == "raw",
                     device=args.device, precision=args.precision, batch_tokens=args.batch_tokens)
    splits, meta = load_rows(args)
    if args.init_from and args.data:  # the start's training sentences out of this file's valid and test splits
        from attention_lens.model.training.start_data import hold_out_start

        splits, meta["held_out_of_start"] = hold_out_start(splits, args.init_from)
    card = train(splits, Path(args.out), tc, meta, progress=not args.quiet)
    print(json.dumps({"out": args.out, "test_metrics": card["test_metrics"], "train_seconds": card["train_seconds"]}),
          file=sys.stderr)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "train", help="train a model and write a checkpoint folder",
        description="Train a translation model of this project's own architecture, with a progress bar, and write "
                    "a checkpoint folder: weights, vocabularies, card.json (what it is, its test scores) and "
                    "train_log.csv. Train on your own sentence pairs (--data, source<TAB>target per line) or on a "
                    "built-in generated corpus (--pair). --variant trains one bug in on purpose (no-causal-mask, "
                    "no-shift, no-scaling): such a model looks near-perfect under teacher forcing and fails when it "
                    "must generate.",
        epilog="""examples:
  %(prog)s --data my_pairs.tsv --out my-model --time-budget 30
  %(prog)s --pair en-fr --variant no-causal-mask --steps 700 --out en-fr-leaky
  %(prog)s --data my_pairs.tsv --init-from my-model --out my-model-more --time-budget 30""")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--pair", choices=("en-fr", "de-en"), help="a built-in generated corpus")
    src.add_argument("--data", help="your own parallel data: source<TAB>target[<TAB>gold] per line")
    p.add_argument("--variant", choices=("healthy", "no-causal-mask", "no-shift", "no-scaling"), default="healthy")
    p.add_argument("--out", required=True)
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--eval-every", type=int, default=500)
    # The model's dimensions: each one not given keeps model.builtin.config.ModelConfig's default (d_model 128,
    # 4 heads, 3 layers each side, d_ff 512, dropout 0.1).
    p.add_argument("--d-model", type=int, help="model width (default 128)")
    p.add_argument("--heads", type=int, help="attention heads per layer (default 4)")
    p.add_argument("--layers", type=int, help="encoder and decoder layers each (default 3)")
    p.add_argument("--d-ff", type=int, help="feed-forward width (default 4 x d-model)")
    p.add_argument("--dropout", type=float, help="dropout (default 0.1)")
    p.add_argument("--warmup", type=int, default=400, help="steps of linear learning-rate warm-up")
    p.add_argument("--valid-sample", type=int, default=200,
                   help="validation sentences decoded at each evaluation for the curve's exact match and chrF")
    p.add_argument("--vocab-size", type=int, default=1000)
    p.add_argument("--dtype", choices=("float16", "float32"), default="float16")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--corpus-seed", type=int, default=0)
    p.add_argument("--train-pairs", type=int, default=60000, help="built-in corpus: how many training pairs")
    p.add_argument("--time-budget", type=float, default=0,
                   help="minutes of training; stop early when spent, the card says how many steps ran (0: none)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch intra-op threads; 2 on an otherwise idle 2-core machine is 1.4x faster than 1 "
                        "(measured), but far slower than 1 when anything else runs")
    p.add_argument("--ema", type=float, default=0.0, metavar="DECAY",
                   help="keep an exponential moving average of the weights with this decay (e.g. 0.999) and save "
                        "it instead of the last weights (0: off)")
    p.add_argument("--text", choices=("raw", "conventions"), default=None,
                   help="raw: the model reads and writes text as people type it (the default with --data); "
                        "conventions: the corpus conventions of the built-in pairs, input normalised to them "
                        "(the default with --pair)")
    p.add_argument("--init-from", metavar="DIR",
                   help="start from this checkpoint's weights and tokenizers (its dimensions win over "
                        "--d-model/--heads/--layers/--vocab-size): continue a run, or fine-tune a healthy model "
                        "into a broken variant; the card records it. With --data, every valid and test pair "
                        "sharing a sentence with the start's training split (read from its card's data and seed) "
                        "moves to training, and stderr and the card (held_out_of_start) say how many")
    guided = p.add_argument_group(
        "guided alignment", "train one cross-attention head toward a word aligner's links while the model keeps "
        "translating (Garg et al. 2019); the loss is the KL divergence of the head's attention, summed over each "
        "source word's pieces, from the links normalised per target word (model/training/guided.py)")
    guided.add_argument("--align-links", metavar="FILE",
                        help="Pharaoh links, one line per pair of --data (python -m model aligner writes one)")
    guided.add_argument("--align-layer", type=int, default=2, help="decoder layer, 1-based (default %(default)s)")
    guided.add_argument("--align-head", type=int, default=1,
                        help="head of that layer, 1-based; 0: the mean of its heads (default %(default)s)")
    guided.add_argument("--align-weight", type=float, default=1.0,
                        help="weight of the alignment loss beside the translation loss (default %(default)s)")
    guided.add_argument("--align-reading", choices=("shift", "plain"), default="shift",
                        help="the decoder rows a target word is read from: where its pieces are the input "
                             "(shift, align's default) or where they are predicted (plain)")
    guided.add_argument("--align-extra", metavar="TSV",
                        help="more training pairs with links of their own (e.g. the training pairs written in "
                             "another form), added to the training split only; needs --align-extra-links")
    guided.add_argument("--align-extra-links", metavar="FILE", help="Pharaoh links, one line per pair of --align-extra")
    guided.add_argument("--align-extra-alignment-only", action="store_true",
                        help="the --align-extra pairs train the supervised head only, not the translation (their "
                             "translation loss is left out)")
    distill = p.add_argument_group(
        "distillation", "word-level knowledge distillation (Kim & Rush 2016): a frozen teacher model reads the same "
        "pairs, and the loss becomes label cross-entropy + weight x KL(teacher || student) of the next-token "
        "distributions, averaged over the target tokens of the pairs trained for translation (pairs that train the "
        "alignment only get no KL term); an anchor that keeps the translation near the teacher's while guided "
        "alignment moves a head (model/training/distill.py)")
    distill.add_argument("--distill-from", metavar="DIR",
                         help="the teacher checkpoint: same source and target tokenizers as the model trained "
                              "(e.g. the model --init-from was fine-tuned from); the card records it")
    distill.add_argument("--distill-weight", type=float, default=0.0, metavar="B",
                         help="weight B of the KL term beside the label cross-entropy (weight 1); needed with "
                              "--distill-from (default %(default)s: off)")
    where = p.add_argument_group("device", "where the steps run and how a batch is measured")
    where.add_argument("--device", default="cpu", metavar="cpu|cuda[:N]|auto",
                       help="cpu (default), a CUDA GPU, or auto (the GPU when torch sees one); the card records it")
    where.add_argument("--precision", choices=("auto", "bf16", "fp16", "off"), default="auto",
                       help="mixed precision on a GPU: auto = bf16 where the card has it, else fp16 with loss "
                            "scaling; off = float32. The CPU always trains in float32")
    where.add_argument("--batch-tokens", type=int, default=0, metavar="N",
                       help="batches of at most N padded tokens (longest source + longest target, times the "
                            "sentences), pairs of similar length together; 0 (default): --batch-size sentences")
    where.add_argument("--preset", choices=sorted(PRESETS),
                       help="gpu-minutes: 4 + 4 layers x 8 heads, d_model 256, 12,000-token batches, mixed precision, "
                            "4 minutes on the GPU (auto device); cpu-rehearsal: the same shape, tiny, 30 CPU steps. "
                            "Flags given beside it win")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=run)
    # The flags a preset may set parse to None when not given, so that a flag given equal to its default still wins.
    settable = {k for preset in PRESETS.values() for k in preset}
    p.set_defaults(defaults={k: p.get_default(k) for k in settable}, **dict.fromkeys(settable))
