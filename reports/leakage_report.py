"""The numbers of issue 5 on the shipped en-fr models: probe, next-position signature, repetition.

For each of `en-fr`, `en-fr-no-causal-mask`, `en-fr-no-shift` (checkpoints/):

1. the causality probe (model/probe.py) in teacher forcing with the mask on and off (shift on), and with the
   shift off (mask on): on the "black cat" preset, and the extreme over the first --probe-n test pairs
   (largest change with the mask on, smallest with it off);
2. on the first --n test pairs, teacher forcing as the model was trained: the strongest layer-head's mean
   weight on the next position (t -> t+1) and on the copying diagonal, teacher-forced accuracy, free-running
   (greedy) exact match, and how often the greedy output writes one token >= 3 times in a row.

    .venv/bin/python -m reports.leakage_report [--n 200] [--probe-n 20] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import torch
from attention_lens.model.analysis.leakage import sample_report
from attention_lens.model.analysis.probe import probe
from attention_lens.model.corpora import first_test_examples
from attention_lens.model.engine.loader import load_engine

ROOT = Path(__file__).resolve().parent.parent

MODELS = ("en-fr", "en-fr-no-causal-mask", "en-fr-no-shift")
SETTINGS = {"mask on": (True, True), "mask off": (False, True), "shift off": (True, False)}
TEXT, TARGET = "the black cat sat on the mat .", "le chat noir s' assit sur le tapis ."


def probe_rows(engine, pairs) -> dict[str, dict]:
    out = {}
    for name, (causal, shift) in SETTINGS.items():
        preset = probe(engine, TEXT, TARGET, causal=causal, shift=shift)
        changes = [probe(engine, e.source, e.target, causal=causal, shift=shift).max_past_logit_change
                   for e in pairs]
        out[name] = {"preset_change": preset.max_past_logit_change, "preset_leaks": preset.leaks,
                     "preset_future_attention": preset.future_attention_mass,
                     "test_max_change": max(changes), "test_min_change": min(changes),
                     "test_leak_share": sum(c > preset.threshold for c in changes) / len(changes)}
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoints", default=str(ROOT / "checkpoints"))
    parser.add_argument("--n", type=int, default=200, help="test pairs for signatures and repetition")
    parser.add_argument("--probe-n", type=int, default=20, help="test pairs probed in each setting")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    folders = {m: Path(args.checkpoints) / m for m in MODELS}
    missing = [m for m, f in folders.items() if not (f / "card.json").is_file()]
    if missing:
        print(f"error: not trained yet: {', '.join(missing)} (in {args.checkpoints})", file=sys.stderr)
        return 2
    pairs = first_test_examples("en-fr", max(args.n, args.probe_n))
    report = {}
    for name, folder in folders.items():
        t0 = time.perf_counter()
        engine = load_engine(folder)
        causal, shift = engine.card.get("trained_causal", True), engine.card.get("trained_shift", True)
        rep = sample_report(engine, [e.source for e in pairs[: args.n]], [e.target for e in pairs[: args.n]],
                            causal, shift)
        d = rep.to_dict()
        report[name] = {"trained": {"causal": causal, "shift": shift}, "card_test_metrics": engine.card.get(
            "test_metrics", {}), "probe": probe_rows(engine, pairs[: args.probe_n]),
            "sample": {k: d[k] for k in ("n", "strongest_next_position", "strongest_copy_diagonal",
                                         "teacher_forced_accuracy", "exact_match", "repeat_share",
                                         "top_token_share")},
            "examples": [{"source": e.source, "reference": e.target, "greedy": o}
                         for e, o in zip(pairs[:3], rep.outputs[:3])], "seconds": round(time.perf_counter() - t0, 1)}
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
        return 0
    print(f"Probe (teacher forcing; preset “{TEXT}” and the first {args.probe_n} test pairs; leak: change > 1e-4)")
    print(f"{'model':22s} {'setting':10s} {'preset change':>14s} {'leaks':>6s} {'future w':>9s} "
          f"{'test max':>10s} {'test min':>10s} {'test leak%':>10s}")
    for name, r in report.items():
        for setting, p in r["probe"].items():
            print(f"{name:22s} {setting:10s} {p['preset_change']:14.3g} {str(p['preset_leaks']):>6s} "
                  f"{p['preset_future_attention']:9.3f} {p['test_max_change']:10.3g} {p['test_min_change']:10.3g} "
                  f"{p['test_leak_share']:10.0%}")
    print(f"\nOn the first {args.n} test pairs, teacher forcing as trained")
    print(f"{'model':22s} {'next-pos (L,H)':>16s} {'copy-diag (L,H)':>16s} {'tf acc':>7s} {'exact':>6s} "
          f"{'repeat≥3':>8s} {'top-tok':>7s}")
    for name, r in report.items():
        s = r["sample"]

        def cell(b: dict) -> str:
            return "—" if b["value"] is None else f"{b['value']:.3f} ({b['layer']},{b['head']})"

        print(f"{name:22s} {cell(s['strongest_next_position']):>16s} {cell(s['strongest_copy_diagonal']):>16s} "
              f"{s['teacher_forced_accuracy']:7.1%} {s['exact_match']:6.1%} {s['repeat_share']:8.0%} "
              f"{s['top_token_share']:7.0%}")
    for name, r in report.items():
        print(f"\n{name} (as trained: causal {r['trained']['causal']}, shift {r['trained']['shift']}; "
              f"{r['seconds']} s), greedy outputs:")
        for ex in r["examples"]:
            print(f"  {ex['source']}\n    ref:    {ex['reference']}\n    greedy: {ex['greedy']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
