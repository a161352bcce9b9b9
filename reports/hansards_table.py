"""The Hansards table of docs/alignment.md: AER of a model's cross-attention on the Hansards en-fr gold for every
extraction and reading, as the mean of all heads, the best single head and (for a model trained with guided
alignment) its supervised head, beside a statistical aligner's `--json` reports.

    .venv/bin/python -m reports.hansards_table --gold PATH/TO/hansards-en-fr.tsv \
        --model checkpoints/everyday-en-fr --model checkpoints/everyday-en-fr-aligned \
        --aligner-json eflomal=hansards.eflomal.json --aligner-json ibm2=hansards.ibm2.json \
        --json reports/hansards_table.json

The sentences are fed as the gold file writes them (lowercased, tokenised, French contractions written out), each
target teacher-forced; every method is counted on all 447 sentences at once (model.analysis.alignment.Tally,
summed counts). "best head" is the lowest AER of any single head on these same sentences, so it is optimistic;
the supervised head is fixed before looking at the gold (the card's guided_alignment layer and head). The
aligner reports come from `python -m model aligner --data GOLD --also assets/data/tatoeba/en-fr.tsv.gz --backend B
--out LINKS --json`. The gold file is evaluation data only: pass its path.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from attention_lens.model.analysis.alignment import Method, run_alignment, selectors
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine.loader import load_engine

EXTRACTIONS = ("argmax", "inter", "union", "threshold0.1", "threshold0.2", "threshold0.3")
READINGS = ("plain", "shift")


def model_rows(path: str, gold: list, head: str = "") -> dict:
    """Every extraction x reading of a model on `gold`; `head` ("L2H1"): the head reported as the supervised
    one when the model's card names none (the same head of the model an aligned one started from)."""
    engine = load_engine(path)
    report = run_alignment(engine, gold, "union-plain-mean", progress=False, keep_links=False)
    tally = report.tally
    guided = engine.card.get("guided_alignment") or {}
    if not guided and head:
        layer, _, h = head.removeprefix("L").partition("H")
        guided = {"layer": int(layer), "head": int(h)}
    out = {"model": Path(path).name, "n_scored": tally.n, "skipped": len(report.skipped), "rows": []}
    for reading in READINGS:
        for extract in EXTRACTIONS:
            how, tau = (extract[:9], float(extract[9:])) if extract.startswith("threshold") else (extract, 0.3)

            def method(layer, head, how=how, reading=reading, tau=tau):
                return Method(how, reading, layer, head, tau)

            mean = tally[method(None, None)]
            heads = {(li, hi): tally[method(li, hi)] for li, hi in selectors(tally.layers, tally.heads)
                     if hi is not None}
            (bl, bh), best = min(heads.items(), key=lambda kv: kv[1].aer)
            row = {"reading": reading, "extract": extract, "mean": round(mean.aer, 4),
                   "best_head": f"L{bl}H{bh}", "best_head_aer": round(best.aer, 4)}
            if guided:
                c = tally[method(int(guided["layer"]), int(guided["head"]) or None)]
                row.update(supervised=round(c.aer, 4), supervised_precision=round(c.precision, 4),
                           supervised_recall=round(c.recall, 4))
            out["rows"].append(row)
    if guided:
        out["supervised"] = f"L{guided['layer']}H{guided['head']}" if guided["head"] else f"layer{guided['layer']}"
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--gold", required=True)
    p.add_argument("--model", action="append", default=[], required=True)
    p.add_argument("--aligner-json", action="append", default=[], metavar="NAME=FILE")
    p.add_argument("--head", default="", metavar="LxHy",
                   help="for a model whose card names no supervised head: report this one in that column")
    p.add_argument("--json", help="write everything here")
    args = p.parse_args(argv)
    gold = read_tsv(Path(args.gold))
    result = {"gold": Path(args.gold).name, "sentences": len(gold), "models": [], "aligners": {}}
    for path in args.model:
        result["models"].append(model_rows(path, gold, args.head))
        print(f"measured {path}", file=sys.stderr)
    for item in args.aligner_json:
        name, _, file = item.partition("=")
        result["aligners"][name] = json.loads(Path(file).read_text())["gold_every_symmetrisation"]
    for m in result["models"]:
        print(f"\n{m['model']} ({m['n_scored']} scored, {m['skipped']} skipped)")
        sup = m.get("supervised")
        print("| reading | extraction | mean of heads | best head (AER) |" + (f" supervised {sup} |" if sup else ""))
        print("|---|---|---|---|" + ("---|" if sup else ""))
        for r in m["rows"]:
            print(f"| {r['reading']} | {r['extract']} | {r['mean']:.3f} | {r['best_head']} {r['best_head_aer']:.3f} |"
                  + (f" {r['supervised']:.3f} |" if sup else ""))
    for name, table in result["aligners"].items():
        print(f"\n{name}: " + ", ".join(f"{h} {v['aer']:.3f}" for h, v in table.items()))
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
