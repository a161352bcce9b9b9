"""The device check: on a machine with a GPU, the family equality checks run on the GPU, and `trace`, `align` and
the Heads ranking are timed on the CPU against the GPU for models of opus-mt's and NLLB-200-distilled-600M's
dimensions (random weights); on a machine without one it says so and runs the CPU half. One run, <= 5 minutes.

1. families (GPU only): each tiny family of harness/models/hf_families loaded on the GPU: its traced attention
   equals the model's own `output_attentions` on the GPU (<= 1e-5), cached decoding equals teacher forcing,
   greedy equals `generate` (same forced first token), and the GPU trace equals the CPU trace (<= 1e-4).
2. timings, per model and device: load (random weights built in memory, placed on the device), `trace` of one
   sentence (greedy, every attention), `align` (align_corpus over --pairs pairs, teacher-forced cross-attention),
   the Heads ranking (rank_heads over --heads-pairs pairs: every head ablated alone). Medians of --repeat.

    .venv/bin/python -m benchmarks.device_check            # opus-mt and NLLB-600M dimensions
    .venv/bin/python -m benchmarks.device_check --quick    # 2 + 2 layers of opus-mt's width, few pairs; no GPU:
                                                           # the family checks rehearsed on the CPU

Prints one JSON object per line ({"check": ...} or {"timing": ...}) and a last {"summary": ...} line. TF32 is
switched off so that GPU float32 matmuls are float32.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."
# Random-weight dimensions of the models people run (Marian opus-mt-*; facebook/nllb-200-distilled-600M).
MODELS = {
    "opus-mt": dict(family="marian", layers=6, heads=8, d_model=512, ffn=2048, vocab=58_101),
    "nllb-600m": dict(family="nllb", layers=12, heads=16, d_model=1024, ffn=4096, vocab=256_206),
}
QUICK = {"opus-mt-2+2": dict(family="marian", layers=2, heads=8, d_model=512, ffn=2048, vocab=8_000)}


def emit(obj: dict) -> None:
    print(json.dumps(obj), flush=True)


def sentences(n: int) -> list[tuple[str, str]]:
    from harness.models.hf_tiny import SENTENCES

    half = len(SENTENCES) // 2
    pairs = list(zip(SENTENCES[:half], SENTENCES[half:]))
    return [pairs[i % len(pairs)] for i in range(n)]


# ---- 1. the family checks on a device --------------------------------------------------------------------
def family_checks(device: str) -> list[dict]:
    from attention_lens.model.engine import DecodeOptions
    from attention_lens.model.engine.loader import load_engine

    from harness.models import hf_families

    rows = []
    for name in hf_families.FAMILIES:
        folder = hf_families.cached(name)
        cpu, dev = load_engine(folder, device="cpu"), load_engine(folder, device=device)
        src, _ = dev.encode_source(SOURCE)
        labels = dev.encode_target(TARGET)
        with torch.no_grad():
            ref = dev.model(input_ids=torch.tensor([src], device=dev.device),
                            labels=torch.tensor([labels], device=dev.device), output_attentions=True)
        trace = dev.trace(SOURCE, target=TARGET)

        def own(attentions):
            return np.stack([a[0].float().cpu().numpy() for a in attentions])

        own_diff = max(float(np.abs(trace.encoder_self_attention - own(ref.encoder_attentions)).max()),
                       float(np.abs(trace.decoder_self_attention - own(ref.decoder_attentions)).max()),
                       float(np.abs(trace.cross_attention - own(ref.cross_attentions)).max()))
        gen = dev.run_generate(src, DecodeOptions(max_len=8))
        tf = dev.run_teacher_forced(src, gen.out_ids, causal=True, shift=True)
        cache_diff = max(float(np.abs(gen.cross_attn - tf.cross_attn).max()),
                         float(np.abs(gen.dec_attn - tf.dec_attn).max()))
        kwargs = {"forced_bos_token_id": int(dev.forced_first)} if dev.forced_first is not None else {}
        if dev.pad_id is not None and dev.pad_id not in dev.eos_ids:
            kwargs["bad_words_ids"] = [[int(dev.pad_id)]]
        with torch.no_grad():
            theirs = dev.model.generate(
                input_ids=torch.tensor([src], device=dev.device), max_new_tokens=8, do_sample=False, num_beams=1,
                decoder_start_token_id=dev.start_id, eos_token_id=sorted(dev.eos_ids), pad_token_id=dev.pad_id,
                forced_eos_token_id=None, **kwargs)[0].tolist()
        cpu_trace = cpu.trace(SOURCE, target=TARGET)
        cpu_diff = float(np.abs(trace.cross_attention - cpu_trace.cross_attention).max())
        row = {"check": name, "device": trace.model["device"], "own_attention_max_diff": own_diff,
               "cache_vs_teacher_forced_max_diff": cache_diff,
               "greedy_equals_generate": theirs[1:1 + len(gen.out_ids)] == gen.out_ids,
               "device_vs_cpu_max_diff": cpu_diff}
        row["ok"] = bool(own_diff <= 1e-5 and cache_diff <= 1e-5 and row["greedy_equals_generate"]
                         and cpu_diff <= 1e-4)
        rows.append(row)
        emit(row)
    return rows


# ---- 2. timings ------------------------------------------------------------------------------------------
def build_engine(spec: dict, device: str):
    """A random-weight model of `spec`'s dimensions with the family's tiny tokenizer (its vocabulary embeds
    spec["vocab"] rows), as an engine on `device`."""
    from attention_lens.model.engine.device import resolve_device
    from attention_lens.model.hf.engine import HFEngine
    from transformers import (
        AutoTokenizer,
        M2M100Config,
        M2M100ForConditionalGeneration,
        MarianConfig,
        MarianMTModel,
    )

    from harness.models import hf_families

    folder = hf_families.cached(spec["family"])
    tok = AutoTokenizer.from_pretrained(str(folder))
    small = json.loads((folder / "config.json").read_text())
    dims = dict(d_model=spec["d_model"], encoder_layers=spec["layers"], decoder_layers=spec["layers"],
                encoder_attention_heads=spec["heads"], decoder_attention_heads=spec["heads"],
                encoder_ffn_dim=spec["ffn"], decoder_ffn_dim=spec["ffn"], max_position_embeddings=512,
                dropout=0.0, attention_dropout=0.0, activation_dropout=0.0, init_std=0.02)
    ids = {k: small[k] for k in ("pad_token_id", "eos_token_id", "decoder_start_token_id") if k in small}
    torch.manual_seed(0)
    with torch.device(resolve_device(device)):
        if spec["family"] == "marian":
            model = MarianMTModel(MarianConfig(vocab_size=spec["vocab"], decoder_vocab_size=spec["vocab"], **ids,
                                               **dims, attn_implementation="eager"))
        else:
            model = M2M100ForConditionalGeneration(M2M100Config(vocab_size=spec["vocab"], scale_embedding=True,
                                                                **ids, **dims, attn_implementation="eager"))
    model.eval().requires_grad_(False)
    card = {"source": "random", "family": model.config.model_type, "parameters": sum(p.numel()
                                                                                     for p in model.parameters())}
    return HFEngine(model, tok, f"{spec['family']}-random", card)


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(fn, device: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        sync(device)
        t = time.perf_counter()
        fn()
        sync(device)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def timings(name: str, spec: dict, device: str, pairs: int, head_pairs: int, repeat: int) -> dict:
    from attention_lens.model.analysis.ablation import rank_heads
    from attention_lens.model.analysis.alignment import align_corpus
    from attention_lens.model.corpora.example import Example
    from attention_lens.model.engine import DecodeOptions

    t = time.perf_counter()
    engine = build_engine(spec, device)
    sync(device)
    load_s = time.perf_counter() - t
    data = sentences(pairs)
    examples = [Example(s, tg, "") for s, tg in data]
    engine.trace(SOURCE, options=DecodeOptions(max_len=4))  # warm-up (kernels, allocator)
    row = {"timing": name, "device": engine.model_info()["device"], "parameters": engine.card["parameters"],
           "build_s": round(load_s, 2),
           "trace_s": timed(lambda: engine.trace(SOURCE, options=DecodeOptions(max_len=16)), device, repeat),
           "align_s": timed(lambda: list(align_corpus(engine, examples, progress=False)), device, 1),
           "align_pairs": pairs,
           "heads_s": timed(lambda: rank_heads(engine, [s for s, _ in data[:head_pairs]],
                                               [tg for _, tg in data[:head_pairs]], progress=False), device, 1),
           "heads_pairs": head_pairs, "heads": 3 * spec["layers"] * spec["heads"]}
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    emit(row)
    return row


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="a 2 + 2 layer model of opus-mt's width (8k vocabulary), "
                                                         "few pairs; without a GPU, the family checks on the CPU")
    ap.add_argument("--pairs", type=int, default=200, help="pairs aligned")
    ap.add_argument("--heads-pairs", type=int, default=20, help="pairs the Heads ranking runs over")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.is_available()
    emit({"gpu": torch.cuda.get_device_name(0) if gpu else None, "torch": torch.__version__,
          "cpu_threads": torch.get_num_threads()})
    if not gpu:
        emit({"note": "no GPU: torch sees no CUDA device here, so the family checks on the GPU and the GPU timings "
                      "are skipped; the CPU half runs"})
    models = QUICK if args.quick else MODELS
    if args.quick:
        args.pairs, args.heads_pairs, args.repeat = min(args.pairs, 16), min(args.heads_pairs, 2), 1
    started = time.perf_counter()
    # Without a GPU, --quick rehearses the family checks on the CPU (the same code; the CPU compared with itself).
    checks = family_checks("cuda") if gpu else (family_checks("cpu") if args.quick else [])
    rows = []
    for name, spec in models.items():
        for device in (["cpu", "cuda"] if gpu else ["cpu"]):
            rows.append(timings(name, spec, device, args.pairs, args.heads_pairs, args.repeat))
    summary = {"checks_ok": all(c["ok"] for c in checks) if checks else None, "checks": len(checks),
               "wall_s": round(time.perf_counter() - started, 1)}
    if gpu:
        for name in models:
            cpu = next(r for r in rows if r["timing"] == name and r["device"] == "cpu")
            dev = next(r for r in rows if r["timing"] == name and r["device"] != "cpu")
            summary[name] = {k: round(cpu[k] / dev[k], 1) for k in ("trace_s", "align_s", "heads_s")}
    emit({"summary": summary})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
