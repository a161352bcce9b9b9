"""The README's figures of the lessons on the shipped en-fr: the three bug switches' meters, training against
inference on one sentence, and (--timing) the key-value cache's cached step against a recompute.

    .venv/bin/python -m benchmarks.lessons_figures [--timing]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch
from attention_lens.model.analysis.bug_meters import equal_length_target, row_sums, sharpness, swap_meter
from attention_lens.model.analysis.exposure import side_by_side
from attention_lens.model.analysis.kv_cache import dims_of, generation_macs, measure_step, step_macs
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.loader import load_engine

ROOT = Path(__file__).resolve().parents[1]
SOURCE, TARGET = "the black cat sat on the mat .", "le chat noir s' assit sur le tapis ."


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=str(ROOT / "checkpoints" / "en-fr"))
    ap.add_argument("--timing", action="store_true", help="also time a cached step against a recompute")
    args = ap.parse_args()
    torch.set_num_threads(1)
    e = load_engine(args.model)
    tf = DecodeOptions(mode="teacher_forced")
    out = {}
    after = row_sums(e.trace(SOURCE, TARGET, DecodeOptions(mode="teacher_forced", mask_after_softmax=True)))
    out["mask_after_softmax"] = {"min_row_sum": after.min_sum, "mean_lost": after.mean_missing,
                                 "max_future": after.max_future}
    healthy, unscaled = sharpness(e.trace(SOURCE, TARGET, tf)), sharpness(
        e.trace(SOURCE, TARGET, DecodeOptions(mode="teacher_forced", unscaled=True)))
    out["unscaled"] = {"entropy": [healthy.entropy, unscaled.entropy], "top": [healthy.top_weight, unscaled.top_weight]}
    try:
        e.trace(SOURCE, TARGET, DecodeOptions(mode="teacher_forced", swap_cross=True))
    except ModelInputError as exc:
        out["swap_error"] = str(exc)
    cut = equal_length_target(e, SOURCE, TARGET)
    swap = swap_meter(e.trace(SOURCE, cut, DecodeOptions(mode="teacher_forced", swap_cross=True)))
    out["swap"] = {"target": cut, "max_future": swap.max_future, "mean_future": swap.mean_future}
    r = side_by_side(e, "the cat sat .", "le chien s' assit .")
    out["exposure"] = {"first_difference_row": r.first_difference, "row_difference": r.row_difference.tolist(),
                       "tf_accuracy": r.tf_accuracy, "naive": r.naive, "product_tf": r.product_tf,
                       "product_free": r.product_free}
    if args.timing:
        src = e.prepare_source(SOURCE)[1]
        run = e.run_generate(src, DecodeOptions())
        dims, n, steps = dims_of(e), len(src), len(run.out_ids)
        out["kv"] = {"steps": steps, "macs_generation": [generation_macs(dims, n, steps, True),
                                                         generation_macs(dims, n, steps, False)]}
        for step in (3, steps - 1):
            got = measure_step(e, src, run.dec_in_ids, step, repeats=7)
            out["kv"][f"step_{step + 1}"] = {
                "cached_ms": 1e3 * got.cached_seconds, "recompute_ms": 1e3 * got.recompute_seconds,
                "macs": [sum(step_macs(dims, n, step, True).values()), sum(step_macs(dims, n, step, False).values())],
                "max_attention_difference": got.max_attention_difference, "rows_after": got.rows_after[0]}
    print(json.dumps(out, indent=1, default=float))


if __name__ == "__main__":
    main()
