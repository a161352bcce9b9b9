"""Sentence pairs rewritten in the written form of the Hansards gold file, for guided-alignment training data.

    .venv/bin/python -m reports.hansards_form --data assets/data/tatoeba/en-fr.tsv.gz --split train --seed 0 \
        --out en-fr.train.hansards-form.tsv

The gold file (hansards-en-fr.tsv) is truecased and tokenised: the first word lowercased unless it is a name
(`i disagree`, `Mr. Speaker ,`), the case of every other word kept (`I`, `Toronto`); punctuation, hyphens
(`peut - être`, `federal - provincial`) and English clitics (`government 's`) are tokens of their own; French
elisions are written out (`le avis`, `je ai`, `aujourd' hui` kept) and contractions split (`de le`, `à le`,
`de les`). `hansards_form` writes a typed pair that way; the first word's case is the one the corpus itself
uses most away from the start of a sentence (`counts`). Only the text is used: no gold link.

--split writes the pairs of one split of --data exactly as `train --data --seed` splits it (valid and test are
held out from training; their rewritten copies must not be trained on).
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

_ELIDED = {"l": "le", "d": "de", "j": "je", "n": "ne", "qu": "que", "s": "se", "c": "ce", "m": "me", "t": "te",
           "jusqu": "jusque", "lorsqu": "lorsque", "puisqu": "puisque", "quoiqu": "quoique"}
_CONTRACTED = {"du": "de le", "au": "à le", "aux": "à les", "des": "de les"}
_ABBREVIATIONS = ("Mr.", "Mrs.", "Ms.", "Dr.", "St.", "Jr.", "Sr.", "hon.", "Hon.", "etc.", "vs.", "M.", "Mme.")
_EN_CLITIC = re.compile(r"(?i)(\w)(n't|'s|'re|'ve|'ll|'d|'m)\b")
_TOKEN = re.compile("|".join(re.escape(a) for a in _ABBREVIATIONS) + r"|\w+|'\w+|[^\w\s]", re.UNICODE)


def _fr_elisions(text: str) -> str:
    text = re.sub(r"(?i)\b(" + "|".join(_ELIDED) + r")'",
                  lambda m: (_ELIDED[m.group(1).lower()] if m.group(1).islower() else
                             _ELIDED[m.group(1).lower()].capitalize()) + " ", text)
    return re.sub(r"(?<=\w)'(?=\w)", "' ", text)  # aujourd'hui -> aujourd' hui


def tokens(text: str, french: bool) -> list[str]:
    """Typed text -> the gold file's tokens, case kept (module docstring)."""
    text = text.replace("’", "'").replace("‘", "'").replace("\u00a0", " ").replace("\u202f", " ")
    text = _fr_elisions(text) if french else _EN_CLITIC.sub(lambda m: m.group(1) + " " + m.group(2), text)
    out: list[str] = []
    for chunk in text.split():
        if french and chunk.endswith("'") and len(chunk) > 1:
            out.append(chunk)  # aujourd'
            continue
        if not french and re.fullmatch(r"(?i)n't|'s|'re|'ve|'ll|'d|'m", chunk):
            out.append(chunk)
            continue
        out.extend(_TOKEN.findall(chunk))
    if french:
        out = [w for word in out for w in (_CONTRACTED[word].split() if word in _CONTRACTED else
                                           _CONTRACTED[word.lower()].capitalize().split()
                                           if word.lower() in _CONTRACTED and word[:1].isupper() else [word])]
    return out


def counts(texts: Iterable[str], french: bool) -> Counter:
    """How often each token is written as it is, away from the first position: the truecaser's evidence."""
    c: Counter = Counter()
    for text in texts:
        c.update(tokens(text, french)[1:])
    return c


def hansards_form(text: str, french: bool, case_counts: Counter) -> str:
    """One sentence in the gold file's written form; the first word keeps its capital only when the corpus
    writes it capitalised more often than not elsewhere in a sentence (names), `I` at the start becomes `i`."""
    words = tokens(text, french)
    if words:
        first = words[0]
        low = first.lower()
        if first == "I" or (first != low and case_counts[low] >= case_counts[first]):
            words[0] = low
    return " ".join(words)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True, help="a parallel TSV(.gz): source \\t target, typed")
    p.add_argument("--pair", default="en-fr", help="source-target languages (fr gets the French rules)")
    p.add_argument("--split", choices=("train", "valid", "test"), help="only this split of train --data's split")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    args = p.parse_args(argv)
    from attention_lens.model.corpora import read_tsv
    from attention_lens.model.corpora.grouped_split import split_by_sentence

    rows = [(e.source, e.target) for e in read_tsv(Path(args.data))]
    src_fr, tgt_fr = (lang == "fr" for lang in args.pair.split("-"))
    src_counts = counts((s for s, _ in rows), src_fr)
    tgt_counts = counts((t for _, t in rows), tgt_fr)
    chosen = split_by_sentence(rows, args.seed)[args.split] if args.split else rows
    opener = gzip.open if args.out.endswith(".gz") else open
    n = 0
    with opener(args.out, "wt", encoding="utf-8") as fh:
        for s, t in chosen:
            a, b = hansards_form(s, src_fr, src_counts), hansards_form(t, tgt_fr, tgt_counts)
            if a and b:
                fh.write(f"{a}\t{b}\n")
                n += 1
    print(f"wrote {n} pairs to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
