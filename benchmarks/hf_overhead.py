"""What does the Hugging Face engine's traced step-through cost over the model's own generate?

Both sides decode the same source greedily for the same fixed number of new tokens, returning every
attention weight: `HFEngine.run_generate` (one call per position through the model's cache, rows copied to
numpy as they come) and `model.generate(output_attentions=True, return_dict_in_generate=True, num_beams=1,
do_sample=False, min_new_tokens=N, max_new_tokens=N)`. The model is a random Marian of realistic small size
(d_model 256, 3 + 3 layers, 4 heads, 8000-token vocabulary); end and pad get a -1e9 output bias in the saved
checkpoint so neither side can stop early. Prints the median of each side and the ratio of medians.

    .venv/bin/python -m benchmarks.hf_overhead [--runs 15] [--new-tokens 40] [--threads N]
    .venv/bin/python -m benchmarks.hf_overhead --quick       # 1 run of 4 new tokens
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

import torch
from attention_lens.model.engine import DecodeOptions
from attention_lens.model.hf.engine import HFEngine

from harness.models import hf_tiny

SOURCE = "the black dog barked at the cat near the river ."


def build(folder: Path) -> Path:
    vocab = 8000
    hf_tiny.build_marian(folder, vocab_size=vocab, decoder_vocab_size=vocab, d_model=256, encoder_layers=3,
                         decoder_layers=3, encoder_attention_heads=4, decoder_attention_heads=4,
                         encoder_ffn_dim=1024, decoder_ffn_dim=1024, max_position_embeddings=512,
                         init_std=0.02)
    from transformers import MarianMTModel

    model = MarianMTModel.from_pretrained(str(folder))
    config = model.config
    with torch.no_grad():  # the checkpoint itself can never end a sentence: a fixed number of new tokens
        model.final_logits_bias[0, config.eos_token_id] = -1e9
        model.final_logits_bias[0, config.pad_token_id] = -1e9
    model.save_pretrained(str(folder))
    return folder


def timed(fns: list, runs: int) -> tuple[list[float], list]:
    """Median seconds of each function over `runs` rounds; the functions alternate within a round so that
    both sides see the same machine load. Returns (medians, the last output of each)."""
    outs = [fn() for fn in fns]  # warm-up
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(runs):
        for i, fn in enumerate(fns):
            start = time.perf_counter()
            outs[i] = fn()
            times[i].append(time.perf_counter() - start)
    return [statistics.median(t) for t in times], outs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--new-tokens", type=int, default=40)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: leave the default)")
    parser.add_argument("--quick", action="store_true", help="1 run of 4 new tokens")
    args = parser.parse_args(argv)
    if args.quick:
        args.runs, args.new_tokens = 1, 4
    if args.threads:
        torch.set_num_threads(args.threads)
    n_new = args.new_tokens
    with tempfile.TemporaryDirectory() as tmp:
        engine = HFEngine.load(build(Path(tmp) / "marian-small"))
    src, _ = engine.encode_source(SOURCE)
    ids = torch.tensor([src])

    def ours():
        return engine.run_generate(src, DecodeOptions(max_len=n_new))

    def theirs():
        with torch.no_grad():
            return engine.model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), num_beams=1,
                                         do_sample=False, min_new_tokens=n_new, max_new_tokens=n_new,
                                         output_attentions=True, return_dict_in_generate=True)

    def whole_trace():
        return engine.trace(SOURCE, options=DecodeOptions(max_len=n_new))

    (t_hf, t_ours, t_trace), (out_hf, run, _) = timed([theirs, ours, whole_trace], args.runs)
    # generate forces the end token at max length (forced_eos_token_id): compare the tokens before it.
    same = run.out_ids[:-1] == out_hf.sequences[0, 1:-1].tolist()
    print(f"Marian d_model 256, 3+3 layers, 4 heads, vocab 8000; {len(src)} source tokens, {n_new} new tokens; "
          f"median of {args.runs} runs; torch threads {torch.get_num_threads()}; same tokens: {same}")
    print(f"{'what':64s} {'median s':>9s} {'ratio':>6s}")
    rows = [("model.generate(output_attentions=True, return_dict_in_generate)", t_hf),
            ("HFEngine.run_generate (cache, rows to numpy)", t_ours),
            ("HFEngine.trace (run_generate + Trace with top-k steps)", t_trace)]
    for name, t in rows:
        print(f"{name:64s} {t:9.4f} {t / t_hf:6.2f}")
    print(json.dumps({"same_tokens": same, "runs": args.runs, "new_tokens": n_new,
                      **{name: {"median_s": t, "ratio": t / t_hf} for name, t in rows}}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
