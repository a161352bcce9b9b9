"""How much of a supervised head's Hansards gap is the way the text is written: the model's test pairs as people
type them against the same pairs written as the Hansards gold file writes its sentences (lowercased, tokenised,
French elisions and contractions written out), each scored against a statistical aligner's links of that form.

    .venv/bin/python -m reports.written_form_gap --model checkpoints/everyday-en-fr-aligned [--backend eflomal]
    .venv/bin/python -m reports.written_form_gap --model checkpoints/everyday-de-en-aligned --forms typed --start

--forms typed alone gives the agreement of docs/alignment.md's table (the head against the aligner's links on the
held-back test pairs); --start also scores the same method on the model the card's init_from names.

The aligner is trained on the whole Tatoeba file of the model's card in each form (its links of the test pairs
are the reference); the model is teacher-forced on the test pairs (model.analysis.alignment.run_alignment) and
its card's supervised method scored. English is lowercased and tokenised; French also has `l'` -> `le `, `du`
-> `de le`, and so on. A rough measure: the reference links change with the writing too.
"""

from __future__ import annotations

import argparse
import json

from attention_lens.model.aligner import align_pairs, default_backend
from attention_lens.model.analysis.alignment import format_pharaoh, run_alignment
from attention_lens.model.corpora import Example, read_tsv
from attention_lens.model.corpora.grouped_split import PROJECT, split_by_sentence
from attention_lens.model.engine.loader import load_engine

from reports.hansards_aer import gold_style  # French and English as the Hansards gold writes them


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", required=True)
    p.add_argument("--backend", default=None, help="aligner backend (default: eflomal when installed)")
    p.add_argument("--forms", nargs="+", choices=("typed", "gold-form"), default=["typed", "gold-form"])
    p.add_argument("--start", action="store_true", help="also the model it was fine-tuned from (card's init_from)")
    args = p.parse_args(argv)
    engine = load_engine(args.model)
    card = engine.card
    method = card["guided_alignment"]["method"]
    rows = [(e.source, e.target) for e in read_tsv(PROJECT / card["data"])]
    test = set(split_by_sentence(rows, int(card.get("seed", 0)))["test"])
    src_fr, tgt_fr = card["pair"].split("-")[0] == "fr", card["pair"].split("-")[1] == "fr"
    out = {"model": args.model, "method": method, "backend": args.backend or default_backend()}
    start = load_engine(PROJECT / card["init_from"]["path"]) if args.start else None
    for form in args.forms:
        pairs = rows if form == "typed" else [(gold_style(s, src_fr), gold_style(t, tgt_fr)) for s, t in rows]
        links = align_pairs(pairs, args.backend)
        gold = [Example(s, t, format_pharaoh(lk)) for (s, t), row, lk in zip(pairs, rows, links)
                if row in test and lk]
        summary = run_alignment(engine, gold, method, progress=False, keep_links=False).summary()
        out[form] = {k: summary[k] for k in ("aer", "precision", "recall", "n_scored")}
        print(form, json.dumps(out[form]), flush=True)
        if start is not None:
            summary = run_alignment(start, gold, method, progress=False, keep_links=False).summary()
            out[form + " (start)"] = {k: summary[k] for k in ("aer", "precision", "recall", "n_scored")}
            print(form, "start", json.dumps(out[form + " (start)"]), flush=True)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
