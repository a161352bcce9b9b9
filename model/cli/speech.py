"""`python -m model speech-corpus` and `train-speech`: the spoken grammar corpus and the speech model trained on it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def run_corpus(args: argparse.Namespace) -> int:
    from attention_lens.model.speech import corpus, synthesis
    from attention_lens.model.speech.processor import build_feature_extractor

    if not synthesis.available():
        print("error: libespeak-ng is not installed (Debian: apt-get install espeak-ng)", file=sys.stderr)
        return 2
    out = Path(args.out)
    fe = build_feature_extractor(args.window)
    log = lambda msg: print(msg, file=sys.stderr, flush=True)  # noqa: E731
    for split, n in (("test", args.n_test), ("valid", args.n_valid), ("train", args.n)):
        if n > 0:
            corpus.write_split(out, split, n, fe, seed=args.seed, keep_audio=split != "train" or args.train_audio,
                               log=log)
    if args.n_wav > 0:
        folder = corpus.write_wav_set(out / "wav22k", args.n_wav, args.window, seed=args.seed)
        log(f"wav22k: {args.n_wav} clips -> {folder}")
    if args.assets:
        n = corpus.copy_subset(out / "test", Path(args.assets) / "test", int(args.assets_mb * 1e6))
        log(f"{Path(args.assets) / 'test'}: the first {n} test clips")
        if args.n_wav > 0:
            n = corpus.copy_subset(out / "wav22k", Path(args.assets) / "wav22k", 10**9, args.assets_wav)
            log(f"{Path(args.assets) / 'wav22k'}: the first {n} WAV clips")
    return 0


def run_train(args: argparse.Namespace) -> int:
    from attention_lens.model.training.speech import SpeechSetting, train_speech

    setting = SpeechSetting(d_model=args.d_model, encoder_layers=args.encoder_layers,
                            decoder_layers=args.decoder_layers, heads=args.heads, batch=args.batch, lr=args.lr,
                            time_budget_min=args.time_budget, threads=args.threads, seed=args.seed,
                            eval_every=args.eval_every, ctc_weight=args.ctc_weight, ctc_units=args.ctc_units,
                            ctc_only_steps=args.ctc_only_steps, crop=not args.no_crop,
                            spec_augment=not args.no_spec_augment,
                            warmup_steps=args.warmup)
    train_speech(Path(args.data), Path(args.out), setting,
                 init_from=Path(args.init_from) if args.init_from else None)
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "speech-corpus", help="synthesise the spoken grammar corpus (espeak-ng, 16 kHz, gold word timings)",
        description="Speak the English sentences of the generated grammar with espeak-ng: train, valid and test "
                    "splits, each with its own voices and speaking rates, pitch and light noise varied; clips at "
                    "16 kHz with a list (clip path<TAB>transcript), gold word timings (CTM) and precomputed "
                    "log-mel features. Optionally a set of 22,050 Hz WAV clips of test sentences.",
        epilog="""example:
  %(prog)s --out data/speech --n 24000 --n-valid 300 --n-test 300 --n-wav 40""")
    p.add_argument("--out", required=True)
    p.add_argument("--n", type=int, default=24000, help="train clips")
    p.add_argument("--n-valid", type=int, default=300)
    p.add_argument("--n-test", type=int, default=300)
    p.add_argument("--n-wav", type=int, default=40, help="22,050 Hz WAV clips of unseen test sentences")
    p.add_argument("--window", type=int, default=6, help="the model's window in seconds; longer clips are skipped")
    p.add_argument("--assets", help="also copy the first test clips (and WAV clips) here, e.g. assets/speech")
    p.add_argument("--assets-mb", type=float, default=9.3, help="the copied test clips' size at most")
    p.add_argument("--assets-wav", type=int, default=20, help="WAV clips to copy")
    p.add_argument("--train-audio", action="store_true", help="also write the train clips as FLAC")
    p.add_argument("--seed", type=int, default=0)
    p.set_defaults(func=run_corpus)

    t = sub.add_parser(
        "train-speech", help="train a small Whisper on a spoken corpus (speech-corpus's folder)",
        description="Train a WhisperForConditionalGeneration from scratch on the precomputed log-mels of "
                    "speech-corpus, keeping the checkpoint with the best valid WER; the output folder is a "
                    "standard Hugging Face Whisper folder with its processor and card.json.",
        epilog="""example:
  %(prog)s --data data/speech --out checkpoints/spoken-grammar --time-budget 65""")
    t.add_argument("--data", required=True)
    t.add_argument("--out", required=True)
    t.add_argument("--time-budget", type=float, default=65.0, help="minutes of training")
    t.add_argument("--d-model", type=int, default=192)
    t.add_argument("--encoder-layers", type=int, default=3)
    t.add_argument("--decoder-layers", type=int, default=3)
    t.add_argument("--heads", type=int, default=4)
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--lr", type=float, default=1e-3)
    t.add_argument("--threads", type=int, default=2)
    t.add_argument("--eval-every", type=int, default=250, help="steps between valid WER checks")
    t.add_argument("--init-from", help="go on training from a folder train-speech wrote (its weights and processor)")
    t.add_argument("--warmup", type=int, default=300, help="warm-up steps")
    t.add_argument("--no-spec-augment", action="store_true",
                   help="train on the log-mels as they are (no time and frequency masks): faster to fit early on")
    t.add_argument("--ctc-weight", type=float, default=0.3, help="share of the auxiliary CTC loss on the encoder")
    t.add_argument("--ctc-units", choices=("chars", "pieces"), default="chars",
                   help="what the auxiliary CTC head spells: letters (learns the sounds quickest) or BPE pieces")
    t.add_argument("--ctc-only-steps", type=int, default=0,
                   help="first steps that train the encoder alone on CTC, before the decoder joins")
    t.add_argument("--no-crop", action="store_true",
                   help="read every batch over the whole window (by default a batch is read to its longest clip, "
                        "a quarter of batches to the whole window)")
    t.add_argument("--seed", type=int, default=0)
    t.set_defaults(func=run_train)
