"""How far a lower float type moves the attention weights: every shipped model, every preset of its pair and kind
of text, run in float32 and again with the weights in bfloat16 (and float16), on the CPU.

Each preset is decoded greedily in float32; that output is then teacher-forced through the same model in every
type, so the rows compared are the same positions. Reported per type: the largest absolute difference of any
attention weight (any kind, layer, head, row) over all presets of all models, its median over presets, and how
many presets' greedy outputs differ from float32's. A type the CPU cannot run is reported with its error.

    .venv/bin/python -m benchmarks.dtype_attention            # every shipped model
    .venv/bin/python -m benchmarks.dtype_attention --quick    # en-fr and everyday-en-fr only

Prints one JSON object per line: one per (model, type), then a summary line {"summary": ...}.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
PRESETS = ROOT / "assets" / "presets.json"
KINDS = ("encoder_self_attention", "decoder_self_attention", "cross_attention")


def presets_for(card: dict) -> list[dict]:
    """The presets of a model's pair and kind of text (as the app picks them)."""
    kind = "raw" if card.get("text") == "raw" else "conventions"
    every = json.loads(PRESETS.read_text(encoding="utf-8"))["presets"]
    return [p for p in every if p["pair"] == card.get("pair") and p.get("text", "conventions") == kind]


def measure(folder: Path, dtypes: list[str]) -> list[dict]:
    from attention_lens.model.engine import DecodeOptions
    from attention_lens.model.engine.loader import load_engine

    base = load_engine(folder)
    presets = presets_for(base.card)
    refs, greedy = [], []
    for p in presets:
        free = base.trace(p["source"])
        target = base.detokenize([s.id for s in free.steps])
        greedy.append(tuple(free.target_tokens))
        refs.append((p["source"], target, base.trace(p["source"], target=target)))
    rows = []
    for name in dtypes:
        row = {"model": folder.name, "dtype": name, "presets": len(presets)}
        try:
            low = load_engine(folder, dtype=name)
            diffs, changed = [], 0
            for (source, target, ref), out in zip(refs, greedy):
                tf = low.trace(source, target=target)
                diffs.append(max(float(np.abs(getattr(tf, k).astype(np.float64) - getattr(ref, k)).max())
                                 for k in KINDS))
                changed += tuple(low.trace(source, options=DecodeOptions()).target_tokens) != out
            row.update(max_abs_diff=max(diffs), median_abs_diff=statistics.median(diffs),
                       greedy_outputs_changed=changed)
        except Exception as exc:  # a type this CPU's kernels do not support: said, not raised
            row["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:200]}"
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="en-fr and everyday-en-fr only")
    ap.add_argument("--dtypes", default="bfloat16,float16")
    args = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    names = ["en-fr", "everyday-en-fr"] if args.quick else sorted(
        p.name for p in (ROOT / "checkpoints").iterdir() if (p / "config.json").is_file())
    dtypes = args.dtypes.split(",")
    everything = []
    for name in names:
        for row in measure(ROOT / "checkpoints" / name, dtypes):
            everything.append(row)
            print(json.dumps(row), flush=True)
    summary = {}
    for name in dtypes:
        ok = [r for r in everything if r["dtype"] == name and "error" in r]
        done = [r for r in everything if r["dtype"] == name and "error" not in r]
        summary[name] = {"models": len(done), "failed": len(ok),
                         "max_abs_diff": max((r["max_abs_diff"] for r in done), default=None),
                         "greedy_outputs_changed": sum(r["greedy_outputs_changed"] for r in done),
                         "presets": sum(r["presets"] for r in done)}
    print(json.dumps({"summary": summary}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
