"""AER of a model's cross-attention on the Hansards en-fr gold alignments, beside a statistical aligner.

    .venv/bin/python -m reports.hansards_aer --model checkpoints/everyday-en-fr \
        --gold PATH/TO/hansards-en-fr.tsv [--eflomal-python eflvenv/bin/python] [--json OUT]

The model side: every gold sentence pair is fed as the file gives it (lowercased except proper nouns,
tokenised, French elisions and contractions written out: `le avis`, `de le ministre`), teacher-forced, and
its cross-attention pooled to the file's words (model.analysis.alignment); AER for every head, every layer
mean and the mean of all heads, under both readings (plain, shift) and two extractions (argmax, union).

The baseline: eflomal (Östling & Tiedemann 2016), a Bayesian IBM-model aligner, trained here on the Tatoeba
en-fr text (lowercased, tokenised and with elisions written out as the gold file has them) together with the
447 gold sentences, as such aligners are used; forward and reverse links symmetrised (intersection, union,
grow-diag-final-and). eflomal compiles C at install, so it runs from its own venv:
`python3 -m venv eflvenv && eflvenv/bin/pip install eflomal`. The gold file is evaluation data only
and is not part of the project: pass its path.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from attention_lens.model.corpora import Example, read_tsv

ROOT = Path(__file__).resolve().parent.parent

# French as the gold file writes it: elided articles and pronouns written out, contractions split.
_ELIDED = {"l": "le", "d": "de", "j": "je", "n": "ne", "qu": "que", "s": "se", "c": "ce", "m": "me", "t": "te",
           "jusqu": "jusque", "lorsqu": "lorsque", "puisqu": "puisque"}
_CONTRACTED = {"du": "de le", "au": "à le", "aux": "à les", "des": "de les"}
_TOKEN = re.compile(r"\w+(?:-\w+)*|[^\w\s]", re.UNICODE)


def gold_style(text: str, french: bool) -> str:
    """`L'homme n'a pas vu.` -> `le homme ne a pas vu .` (French); `Don't go!` -> `don ' t go !`."""
    text = text.lower().replace("’", "'")
    if french:
        text = re.sub(r"\b(" + "|".join(_ELIDED) + r")'", lambda m: _ELIDED[m.group(1)] + " ", text)
    words = _TOKEN.findall(text)
    if french:
        words = [w for word in words for w in _CONTRACTED.get(word, word).split()]
    return " ".join(words)


# ---- the statistical baseline ----------------------------------------------------------------------------
def grow_diag_final_and(fwd: set[tuple[int, int]], rev: set[tuple[int, int]]) -> set[tuple[int, int]]:
    """Koehn et al. (2003)'s symmetrisation: start from the intersection, grow into diagonal neighbours in the
    union that cover an unaligned word, then add union links whose both words are unaligned."""
    union, links = fwd | rev, set(fwd & rev)
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    grown = True
    while grown:
        grown = False
        for i, j in sorted(links):
            for di, dj in neighbours:
                cand = (i + di, j + dj)
                if cand in union and cand not in links:
                    src_free = all(a != cand[0] for a, _ in links)
                    tgt_free = all(b != cand[1] for _, b in links)
                    if src_free or tgt_free:
                        links.add(cand)
                        grown = True
    for cand in sorted(union):
        if all(a != cand[0] for a, _ in links) and all(b != cand[1] for _, b in links):
            links.add(cand)
    return links


def eflomal_links(python: str, pairs: list[tuple[str, str]], tmp: Path) -> tuple[list[set], list[set]]:
    """Forward and reverse links of every pair, from eflomal run in its own interpreter."""
    (tmp / "src.txt").write_text("".join(s + "\n" for s, _ in pairs), encoding="utf-8")
    (tmp / "tgt.txt").write_text("".join(t + "\n" for _, t in pairs), encoding="utf-8")
    code = ("import eflomal, sys; d = sys.argv[1]; a = eflomal.Aligner(n_samplers=2)\n"
            "with open(d + '/src.txt') as s, open(d + '/tgt.txt') as t:\n"
            "    a.align(s, t, links_filename_fwd=d + '/fwd.txt', links_filename_rev=d + '/rev.txt', quiet=True)\n")
    subprocess.run([python, "-c", code, str(tmp)], check=True)

    def read(name: str) -> list[set]:
        out = []
        for line in (tmp / name).read_text().splitlines():
            out.append({tuple(int(x) for x in link.split("-")) for link in line.split()})
        return out

    return read("fwd.txt"), read("rev.txt")


def baseline(python: str, gold_rows: list[Example], tatoeba: Path) -> dict[str, dict[str, float]]:
    from attention_lens.model.analysis.alignment import count, parse_pharaoh

    with gzip.open(tatoeba, "rt", encoding="utf-8") as f:
        train = [(gold_style(s, False), gold_style(t, True)) for s, t in (line.rstrip("\n").split("\t") for line in f)]
    train = [(s, t) for s, t in train if s and t]
    gold_pairs = [(e.source.lower(), e.target.lower()) for e in gold_rows]  # lowercased as the training text is
    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = eflomal_links(python, train + gold_pairs, Path(tmp))
    fwd, rev = fwd[len(train):], rev[len(train):]
    out = {}
    for name, combine in (("forward", lambda f, r: f), ("intersection", lambda f, r: f & r),
                          ("union", lambda f, r: f | r), ("grow-diag-final-and", grow_diag_final_and)):
        total = None
        for f, r, example in zip(fwd, rev, gold_rows):
            c = count(combine(f, r), parse_pharaoh(example.gold))
            total = c if total is None else total + c
        out[name] = total.as_dict()
    out["training_pairs"] = {"tatoeba": len(train), "gold": len(gold_pairs)}
    return out


# ---- the model ------------------------------------------------------------------------------------------
def model_side(model: str, examples: list[Example]) -> dict:
    from attention_lens.model.analysis.alignment import Method, run_alignment
    from attention_lens.model.engine.loader import load_engine

    engine = load_engine(model)
    out: dict = {"model": model, "layers": engine.n_decoder_layers, "heads_per_layer": engine.n_heads, "runs": {}}
    for extract in ("argmax", "union"):
        for reading in ("plain", "shift"):
            report = run_alignment(engine, examples, f"{extract}-{reading}-mean", progress=False)
            summary = report.summary()
            tally = report.tally
            layers = {}
            for li in range(1, engine.n_decoder_layers + 1):
                layers[f"layer{li}"] = tally[Method(extract, reading, li, None)].aer
            out["runs"][f"{extract}-{reading}"] = {
                "mean_of_heads": {k: summary[k] for k in ("aer", "precision", "recall")},
                "layers": layers, "heads": summary["heads"], "scored": summary["n_scored"],
                "skipped": len(summary.get("skipped", []))}
    return out


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default=str(ROOT / "checkpoints" / "everyday-en-fr"))
    p.add_argument("--gold", required=True, help="hansards-en-fr.tsv (source, target, Pharaoh gold)")
    p.add_argument("--tatoeba", default=str(ROOT / "assets" / "data" / "tatoeba" / "en-fr.tsv.gz"))
    p.add_argument("--eflomal-python", help="a Python with eflomal installed; without it no baseline")
    p.add_argument("--json", help="write the figures here as JSON")
    args = p.parse_args()
    gold_rows = read_tsv(Path(args.gold))
    result = {"sentences": len(gold_rows), "model": model_side(args.model, gold_rows)}
    if args.eflomal_python:
        result["eflomal"] = baseline(args.eflomal_python, gold_rows, Path(args.tatoeba))
    text = json.dumps(result, indent=2)
    if args.json:
        Path(args.json).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
