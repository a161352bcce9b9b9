"""How fast does our engine step through a sentence while recording every attention weight, against the ways it
could do otherwise? Ratios of medians, the compared sides interleaved in every round:

1. cache: step-through with the key-value cache (`decode_batch`) against recomputing the whole decoder
   prefix at every step (the encoder runs once on both sides), both recording every attention row;
2. capture: `decode_batch(need_weights=True)` (our attention, weights returned) against
   `need_weights=False` (PyTorch's fused scaled_dot_product_attention, no weights);
3. hf: our `decode_batch` against Hugging Face `MarianMTModel.generate(output_attentions=True,
   return_dict_in_generate=True)` with eager attention, same dimensions, same input ids, same new tokens.

Models have random weights (the speed of a forward pass does not depend on what the weights are); the end
and padding tokens get a -1e9 output bias so that greedy decoding runs exactly to the requested length.
benchmarks/run_all.py writes these tables as parts 1-3 of RESULTS.md; alone, this prints them:

    .venv/bin/python -m benchmarks.engine_speed [--rounds 9]
    .venv/bin/python -m benchmarks.engine_speed --quick     # tiny sizes, one round: checks that it runs
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch
from attention_lens.model.builtin.checkpoint import Checkpoint
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.engine import DecodeOptions, RawRun
from attention_lens.model.engine.masks import causal_mask
from attention_lens.model.engine.tensors import pad_batch
from attention_lens.model.engine.tensors import to_numpy as _np

# The shipped models' dimensions (model/train.py TrainConfig): d_model 128, 4 heads, 3 + 3 layers, d_ff 512,
# a 1000-piece vocabulary; max_positions raised so that 256 target tokens fit.
DEFAULT_DIMS = dict(d_model=128, n_heads=4, n_encoder_layers=3, n_decoder_layers=3, d_ff=512)
LARGE_DIMS = dict(d_model=512, n_heads=8, n_encoder_layers=6, n_decoder_layers=6, d_ff=2048)
VOCAB = 1000


def interleaved(fns: dict[str, Callable[[], object]], rounds: int) -> dict[str, list[float]]:
    """Seconds of each function over `rounds` rounds after one warm-up call each; within a round the
    functions run one after the other (in reversed order every other round), so a load spike on the shared
    machine hits every side alike."""
    for fn in fns.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for r in range(rounds):
        for name in (list(fns) if r % 2 == 0 else list(fns)[::-1]):
            start = time.perf_counter()
            fns[name]()
            times[name].append(time.perf_counter() - start)
    return times


def median(xs: list[float]) -> float:
    return statistics.median(xs)


def random_model(max_positions: int = 1024, seed: int = 0, **dims) -> Transformer:
    """A random-weight Transformer that never ends a sentence early (end and pad get a -1e9 bias)."""
    torch.manual_seed(seed)
    cfg = ModelConfig(src_vocab_size=VOCAB, tgt_vocab_size=VOCAB, dropout=0.0, max_positions=max_positions,
                      **{**DEFAULT_DIMS, **dims})
    model = Transformer(cfg).eval()
    with torch.no_grad():
        model.generator.bias[cfg.eos_id] = -1e9
        model.generator.bias[cfg.pad_id] = -1e9
    return model


def engine_of(model: Transformer) -> BuiltinEngine:
    """The engine around a random model, so that decoding runs the engines' own loop (the tokenizer, which
    decoding ids never uses, is a tiny one)."""
    tok = train_tokenizer(["the cat sat .", "le chat s' assit ."] * 4, vocab_size=30)
    return BuiltinEngine(Checkpoint(model.cfg, model, tok, tok, {}), name="random")


def generate(engine: BuiltinEngine, src: list[int], opts: DecodeOptions, need_weights: bool = True) -> RawRun:
    return engine.decode_batch([src], opts, need_weights)[0]


def source_ids(n: int, seed: int = 0) -> list[int]:
    rng = np.random.default_rng(seed)
    return [*rng.integers(4, VOCAB, n - 1).tolist(), 3]  # ordinary pieces, then EOS


@torch.inference_mode()  # as decode_batch
def recompute_generate(model: Transformer, src: list[int], steps: int) -> RawRun:
    """Greedy decoding without a cache: step t runs the decoder over the whole prefix 0..t again and keeps
    the last row of every attention map. What a step-through costs without the KV cache."""
    cfg = model.cfg
    ids, keep = pad_batch([src], cfg.pad_id)
    enc = model.encode(ids, keep)
    prefix = [cfg.bos_id]
    out_ids, self_rows, cross_rows, logits_rows = [], [], [], []
    for t in range(steps):
        out = model.decode(torch.tensor([prefix]), enc, causal_mask(t + 1))
        logits = out.logits[0, -1]
        nxt = int(logits.argmax())
        self_rows.append(np.stack([_np(w[0, :, -1]) for w in out.self_attentions]))
        cross_rows.append(np.stack([_np(w[0, :, -1]) for w in out.cross_attentions]))
        logits_rows.append(_np(logits))
        out_ids.append(nxt)
        prefix.append(nxt)
    n_layers, m = len(model.decoder), len(out_ids)
    dec = np.zeros((n_layers, cfg.n_heads, m, m), dtype=np.float32)
    for t, row in enumerate(self_rows):
        dec[:, :, t, : t + 1] = row
    enc_attn = np.stack([_np(w[0]) for w in enc.attentions])
    return RawRun(src, prefix[:m], out_ids, np.stack(logits_rows), enc_attn, dec, np.stack(cross_rows, 2))


@dataclass
class Row:
    """One line of a results table: a case, each side's median seconds, the median of the per-round ratios
    A/B (each round's two runs are back to back, so the load drift of a shared machine cancels), the target."""

    case: str
    a_name: str
    a_s: float
    b_name: str
    b_s: float
    ratio: float
    target: str
    met: bool | None


def row(case: str, a_name: str, a: list[float], b_name: str, b: list[float], target: str,
        passes: Callable[[float], bool] | None) -> Row:
    ratio = median([x / y for x, y in zip(a, b)])
    return Row(case, a_name, median(a), b_name, median(b), ratio, target, passes(ratio) if passes else None)


def bench_cache(cases: list[tuple[str, dict, int]], rounds: int, n_src: int = 16) -> list[Row]:
    """cases: (name, dims, target length); the target applies to the default dims at 256."""
    rows = []
    for name, dims, length in cases:
        model = random_model(**dims)
        engine = engine_of(model)
        src = source_ids(n_src)
        opts = DecodeOptions(max_len=length)
        cached = generate(engine, src, opts)
        full = recompute_generate(model, src, length)
        if cached.out_ids != full.out_ids or not np.allclose(cached.cross_attn, full.cross_attn, atol=1e-5):
            raise AssertionError(f"cache and recompute disagree at length {length}")
        times = interleaved({"recompute": lambda m=model, s=src, n=length: recompute_generate(m, s, n),
                             "cache": lambda e=engine, s=src, o=opts: generate(e, s, o)},
                            rounds if length < 256 and not dims else max(3, rounds // 2))
        targeted = length == 256 and not dims
        rows.append(row(f"{name}, {length} target tokens", "recompute", times["recompute"], "KV cache",
                        times["cache"], "cache >= 5x faster at 256" if targeted else "",
                        (lambda r: r >= 5) if targeted else None))
    return rows


def bench_capture(cases: list[tuple[str, dict, int, int]], rounds: int) -> list[Row]:
    """cases: (name, dims, source tokens, target tokens)."""
    rows = []
    for name, dims, n_src, length in cases:
        engine = engine_of(random_model(**dims))
        src = source_ids(n_src)
        opts = DecodeOptions(max_len=length)
        times = interleaved({"with": lambda e=engine, s=src, o=opts: generate(e, s, o, need_weights=True),
                             "without": lambda e=engine, s=src, o=opts: generate(e, s, o, need_weights=False)},
                            rounds)
        rows.append(row(f"{name}, n={n_src}, m={length}", "capture (weights)", times["with"],
                        "fused sdpa (no weights)", times["without"], "overhead <= 1.3x", lambda r: r <= 1.3))
    return rows


def marian_like(dims: dict, max_positions: int = 1024, seed: int = 0):
    """A random MarianMTModel of our dimensions with eager attention (the one that returns weights)."""
    from transformers import MarianConfig, MarianMTModel

    torch.manual_seed(seed)
    config = MarianConfig(vocab_size=VOCAB, decoder_vocab_size=VOCAB, d_model=dims["d_model"],
                          encoder_layers=dims["n_encoder_layers"], decoder_layers=dims["n_decoder_layers"],
                          encoder_attention_heads=dims["n_heads"], decoder_attention_heads=dims["n_heads"],
                          encoder_ffn_dim=dims["d_ff"], decoder_ffn_dim=dims["d_ff"],
                          max_position_embeddings=max_positions, pad_token_id=VOCAB - 1, eos_token_id=0,
                          decoder_start_token_id=VOCAB - 1, forced_eos_token_id=None, dropout=0.0,
                          attention_dropout=0.0, activation_dropout=0.0)
    model = MarianMTModel._from_config(config, attn_implementation="eager").eval()
    with torch.no_grad():
        model.final_logits_bias[0, config.eos_token_id] = -1e9
        model.final_logits_bias[0, config.pad_token_id] = -1e9
    return model


def bench_hf(cases: list[tuple[str, dict, int, int]], rounds: int) -> list[Row]:
    rows = []
    for name, dims, n_src, length in cases:
        ours = engine_of(random_model(**dims))
        theirs = marian_like({**DEFAULT_DIMS, **dims})
        src = source_ids(n_src)
        ids = torch.tensor([src])
        opts = DecodeOptions(max_len=length)

        def hf_generate(model=theirs, ids=ids, length=length):
            with torch.no_grad():
                return model.generate(input_ids=ids, attention_mask=torch.ones_like(ids), num_beams=1,
                                      do_sample=False, min_new_tokens=length, max_new_tokens=length,
                                      output_attentions=True, return_dict_in_generate=True)

        out = hf_generate()
        if out.sequences.shape[1] != length + 1 or len(out.cross_attentions) != length:
            raise AssertionError(f"Hugging Face generated {out.sequences.shape[1] - 1} tokens, wanted {length}")
        times = interleaved({"hf": hf_generate,
                             "ours": lambda e=ours, s=src, o=opts: generate(e, s, o, need_weights=True)},
                            rounds)
        rows.append(row(f"{name}, n={n_src}, m={length}", "ours (decode_batch)", times["ours"], "HF generate",
                        times["hf"], "ratio <= 1.0", lambda r: r <= 1.0))
    return rows


SMALL_DIMS = dict(d_model=32, n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64)


def run(quick: bool, rounds: int) -> dict[str, list[Row]]:
    """The three comparisons at the sizes RESULTS.md reports (quick: tiny dimensions and lengths)."""
    if quick:
        cache_cases = [("tiny", SMALL_DIMS, 4), ("tiny", SMALL_DIMS, 8)]
        cases = [("tiny", SMALL_DIMS, 8, 8)]
    else:
        cache_cases = [("default dims", {}, 16), ("default dims", {}, 64), ("default dims", {}, 256),
                       ("6 x 8, d_model 512", LARGE_DIMS, 256)]
        cases = [("default dims", {}, 16, 64), ("default dims", {}, 32, 256),
                 ("6 x 8, d_model 512", LARGE_DIMS, 32, 64)]
    return {"cache": bench_cache(cache_cases, rounds), "capture": bench_capture(cases, rounds),
            "hf": bench_hf(cases, rounds)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one round: checks that it runs")
    ap.add_argument("--rounds", type=int, default=None, help="rounds per comparison (default 9, quick 1)")
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    results = run(args.quick, args.rounds or (1 if args.quick else 9))
    for part, rows in results.items():
        for r in rows:
            print(f"{part:8s} {r.case:40s} {r.a_name} {r.a_s * 1e3:9.1f} ms  {r.b_name} {r.b_s * 1e3:9.1f} ms  "
                  f"ratio {r.ratio:.2f}  {r.target}")
    print(json.dumps({part: [{"case": r.case, "a": r.a_name, "a_s": r.a_s, "b": r.b_name, "b_s": r.b_s,
                              "ratio": r.ratio} for r in rows] for part, rows in results.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
