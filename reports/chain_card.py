"""The card of a checkpoint made by a chain of fine-tunes (each `train --init-from` the one before) and, optionally,
a weight mix with the chain's start (reports/mix_checkpoints.py): the stages' cards are read back, checked to link
up, and recorded in the final card, so that it tells the whole history and the figures measured on the final weights.

    .venv/bin/python -m reports.chain_card --model FINAL --stages STAGE1/card.json ... STAGEn/card.json \\
        --method inter-shift-L2H1 --test test.json --valid valid.json [--hansards H.json] [--agreement A.json] \\
        [--extra-description TEXT]

FINAL is the last stage's folder or a mix of it (its card is rewritten in place). Each stage's card must start
where the stage before it ended (its `init_from` steps and seconds are that stage's; the first stage's `init_from`
is the chain's start and becomes the final card's `init_from`). The final card gets:

- `fine_tune_stages`: per stage its start, steps, minutes, learning rate, alignment weight and extra pairs,
  distillation weight, and the alignment loss (and KL) over its first and last 100 steps;
- `guided_alignment`: the last stage's settings, the given `method`, the first stage's own entries that the later
  cards lack (aligner, links command, Hansards and agreement figures of the start), the alignment loss over the
  first 100 steps of the first stage and the last 100 of the last, the chain's steps and minutes;
- `test_metrics` / `valid_metrics` from `python -m model eval --json` of FINAL; the Hansards row (shift | inter of
  the card's head, from reports/hansards_table.py --json) and the agreement with the aligner's links on the test
  pairs (reports/written_form_gap.py --forms typed --start, its last line) when given.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

METRICS = ("n", "exact_match", "chrf", "bleu", "teacher_forced_accuracy", "teacher_forced_loss")


def _load(path: str) -> dict[str, Any]:
    return json.loads(Path(path).read_text(encoding="utf-8"))


def _stage(card: dict[str, Any]) -> dict[str, Any]:
    """One stage of the chain: what its card says it did, counted from the checkpoint it started from."""
    guided, tc, before = card.get("guided_alignment", {}), card.get("train_config", {}), card["init_from"]
    stage = {"start": card["init_from"]["path"], "steps": card["steps"] - before["steps"],
             "minutes": round((card["train_seconds"] - before["train_seconds"]) / 60, 1), "lr": tc.get("lr"),
             "threads": tc.get("threads"), "device": guided.get("device", card.get("device")),
             "align_weight": guided.get("weight"), "extra_pairs": guided.get("extra_pairs", 0),
             "extra_translation": guided.get("extra_translation"),
             "alignment_loss_first_100": guided.get("loss_first_100"),
             "alignment_loss_last_100": guided.get("loss_last_100")}
    if "distillation" in card:
        d = card["distillation"]
        stage.update(distill_from=d["teacher"], distill_weight=d["weight"], kl_first_100=d["kl_first_100"],
                     kl_last_100=d["kl_last_100"])
    return stage


def chain_card(final: dict[str, Any], stages: list[dict[str, Any]], paths: list[str], method: str) -> dict[str, Any]:
    """The final card with the chain recorded (see the module docstring). ValueError when the stages do not link
    up: a stage whose init_from is not where the stage before it ended (steps and seconds)."""
    for k in range(1, len(stages)):
        start, before = stages[k]["init_from"], stages[k - 1]
        if (start["steps"], start["train_seconds"]) != (before["steps"], before["train_seconds"]):
            raise ValueError(f"{paths[k]} started from {start['path']} at {start['steps']} steps, but {paths[k - 1]} "
                             f"ended at {before['steps']}: not one chain")
    first, last = stages[0], stages[-1]
    card = {k: v for k, v in final.items() if k not in ("test_metrics", "valid_metrics")}
    card["init_from"] = dict(first["init_from"])
    card["fine_tune_stages"] = [_stage(s) for s in stages]
    guided = dict(last["guided_alignment"])
    for key, value in first["guided_alignment"].items():
        if key != "device":  # where the first stage ran is in its stage entry, not the chain's
            guided.setdefault(key, value)
    guided.update(method=method, loss_first_100=first["guided_alignment"]["loss_first_100"],
                  loss_last_100=last["guided_alignment"]["loss_last_100"],
                  loss_over="the first 100 steps of the first stage and the last 100 steps of the last",
                  steps=last["steps"] - first["init_from"]["steps"],
                  minutes=round((last["train_seconds"] - first["init_from"]["train_seconds"]) / 60, 1))
    card["guided_alignment"] = guided
    return card


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True, help="the final checkpoint folder (its card.json is rewritten)")
    p.add_argument("--stages", nargs="+", required=True, help="the stages' card.json files, first to last")
    p.add_argument("--method", required=True, help="the supervised head's alignment method, e.g. inter-shift-L2H1")
    p.add_argument("--test", required=True, help="`python -m model eval --model FINAL --split test --json` output")
    p.add_argument("--valid", required=True, help="the same with --split valid")
    p.add_argument("--hansards", help="reports/hansards_table.py --json output with FINAL among its models")
    p.add_argument("--agreement", help="reports/written_form_gap.py --forms typed --start output (its JSON line)")
    p.add_argument("--extra-description", help="what the extra pairs were, in words (the cards hold only paths)")
    args = p.parse_args(argv)
    final_path = Path(args.model, "card.json")
    try:
        card = chain_card(_load(final_path), [_load(s) for s in args.stages], args.stages, args.method)
    except (OSError, ValueError, KeyError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    card["test_metrics"] = {k: round(v, 5) for k, v in _load(args.test).items() if k in METRICS}
    card["valid_metrics"] = {k: round(v, 5) for k, v in _load(args.valid).items() if k in METRICS}
    guided = card["guided_alignment"]
    if args.extra_description:
        guided["extra_description"] = args.extra_description
    if args.hansards:
        table = _load(args.hansards)
        rows = [m for m in table["models"] if Path(m["model"]).name == Path(args.model).name]
        if not rows:
            print(f"error: {args.hansards} has no model named {Path(args.model).name}", file=sys.stderr)
            return 2
        row = next(r for r in rows[0]["rows"] if (r["reading"], r["extract"]) == (guided["reading"], "inter"))
        guided["hansards"] = {**guided.get("hansards", {}), "aer": row["supervised"], "n": table["sentences"],
                              "precision": row["supervised_precision"], "recall": row["supervised_recall"]}
    if args.agreement:
        gap = _load(args.agreement)
        typed, start = gap["typed"], gap["typed (start)"]
        guided["agreement"] = {**guided.get("agreement", {}), "aer": round(typed["aer"], 4), "n": typed["n_scored"],
                               "precision": round(typed["precision"], 4), "recall": round(typed["recall"], 4),
                               "start_same_head": round(start["aer"], 4)}
    final_path.write_text(json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"{final_path}: {len(args.stages)} stages, {guided['steps']} steps, {guided['minutes']} min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
