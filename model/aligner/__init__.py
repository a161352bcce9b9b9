"""A statistical word aligner inside the project: train on a parallel file, write Pharaoh links.

Words are the whitespace tokens of each side, the same words `align` scores and the built-in models' pieces
group into (model.analysis.alignment.words). The aligner sees each word as a key: lowercased, with
punctuation stripped from its ends when something is left (`you.` and `you` are one word to it; `.` stays
`.`), so raw text with punctuation attached and tokenised text share their statistics.

Backends: `eflomal` (Östling & Tiedemann 2016, the reference: a Bayesian HMM with fertility, sampled, seeded
by eflomal itself: it takes no seed; used when the optional `eflomal` package is installed, `pip install
'attention-lens[eflomal]'`) and `ibm2` (model.aligner.ibm2: fast_align's IBM Model 2 in numpy, deterministic,
always available). Both run in both directions, and the two directions are symmetrised
(model.aligner.symmetrise, default grow-diag-final-and).
Modules: `ibm2` (IBM Model 2 in numpy), `symmetrise` (two directions into one).
"""

from __future__ import annotations

import importlib.util
import os
import tempfile
import unicodedata
from collections.abc import Sequence

from attention_lens.model.aligner.symmetrise import HEURISTICS, symmetrise

BACKENDS = ("eflomal", "ibm2")
CHOICES = ("forward", "reverse", *HEURISTICS)  # what `combine` accepts
Link = tuple[int, int]

__all__ = ["BACKENDS", "CHOICES", "HEURISTICS", "INSTALL_EFLOMAL", "align_pairs", "combine", "default_backend",
           "describe_backend", "directions", "eflomal_available", "symmetrise", "word_key"]


def word_key(word: str) -> str:
    """What the aligner counts a word as (module docstring)."""
    word = unicodedata.normalize("NFKC", word).lower()
    stripped = "".join(word).strip("".join(ch for ch in set(word) if unicodedata.category(ch).startswith("P")))
    return stripped or word


INSTALL_EFLOMAL = "pip install 'attention-lens[eflomal]'"  # the declared extra (pyproject.toml)


def eflomal_available() -> bool:
    return importlib.util.find_spec("eflomal") is not None


def default_backend() -> str:
    return "eflomal" if eflomal_available() else "ibm2"


def describe_backend(backend: str, by_default: bool) -> str:
    """One line saying which backend runs, whether a rerun gives the same links, and, when ibm2 runs because
    eflomal is not installed, how to install it. eflomal 2.0 takes no seed: its C sampler seeds every sampler from
    /dev/urandom, in OpenMP thread order, so no option of ours can fix its draws."""
    if backend == "eflomal":
        return ("eflomal (sampled, seeded by eflomal itself from /dev/urandom: it takes no seed, so a rerun can "
                "differ slightly; --backend ibm2 is deterministic)")
    out = "ibm2 (IBM Model 2 in numpy, deterministic)"
    if by_default and not eflomal_available():
        out += f": eflomal, the stronger default, is not installed ({INSTALL_EFLOMAL})"
    return out


def _ids(sentences: Sequence[Sequence[str]]) -> list[list[int]]:
    vocab: dict[str, int] = {}
    return [[vocab.setdefault(w, len(vocab)) for w in s] for s in sentences]


def _directions_ibm2(src, tgt, iterations):
    from attention_lens.model.aligner.ibm2 import train_direction

    s, t = _ids(src), _ids(tgt)
    forward = train_direction(s, t, iterations)
    reverse = [[(i, j) for j, i in links] for links in train_direction(t, s, iterations)]
    return forward, reverse


def _read_links(path: str) -> list[set[Link]]:
    with open(path, encoding="utf-8") as fh:
        return [{(int(a), int(b)) for a, b in (item.split("-") for item in line.split())} for line in fh]


def _directions_eflomal(src, tgt, iterations):
    from eflomal import Aligner

    with tempfile.TemporaryDirectory() as tmp:
        fwd, rev = os.path.join(tmp, "fwd"), os.path.join(tmp, "rev")
        # eflomal's own defaults choose the iteration counts from the corpus size when n_iterations is None
        Aligner(n_iterations=iterations or None).align(
            [" ".join(s) + "\n" for s in src], [" ".join(t) + "\n" for t in tgt],
            links_filename_fwd=fwd, links_filename_rev=rev, quiet=True)
        return _read_links(fwd), _read_links(rev)


def directions(pairs: Sequence[tuple[str, str]], backend: str | None = None, iterations: int = 0,
               also: Sequence[tuple[str, str]] = ()) -> tuple[list[set[Link]], list[set[Link]]]:
    """The forward (each target word to its source word) and reverse (each source word to its target word)
    links of each pair, both as (source word, target word), trained on `pairs` plus `also` (extra parallel
    text for the statistics only). iterations: EM iterations per direction for ibm2 (0: 5); 0 keeps
    eflomal's own schedule. A pair with an empty side gets no links."""
    backend = backend or default_backend()
    if backend not in BACKENDS:
        raise ValueError(f"aligner backend must be one of {', '.join(BACKENDS)}; got {backend!r}")
    if backend == "eflomal" and not eflomal_available():
        raise ValueError(f"the eflomal backend needs the eflomal package ({INSTALL_EFLOMAL}, which compiles C "
                         f"code); the ibm2 backend needs nothing")
    every = [*pairs, *also]
    src = [[word_key(w) for w in s.split()] for s, _ in every]
    tgt = [[word_key(w) for w in t.split()] for _, t in every]
    usable = [k for k in range(len(every)) if src[k] and tgt[k]]
    src_u, tgt_u = [src[k] for k in usable], [tgt[k] for k in usable]
    if backend == "ibm2":
        forward, reverse = _directions_ibm2(src_u, tgt_u, iterations or 5)
    else:
        forward, reverse = _directions_eflomal(src_u, tgt_u, iterations)
    out_f: list[set[Link]] = [set() for _ in pairs]
    out_r: list[set[Link]] = [set() for _ in pairs]
    for pos, k in enumerate(usable):
        if k >= len(pairs):
            break
        out_f[k], out_r[k] = set(forward[pos]), set(reverse[pos])
    return out_f, out_r


def combine(forward: Sequence[set[Link]], reverse: Sequence[set[Link]], heuristic: str) -> list[set[Link]]:
    """Per pair: one direction (`forward`, `reverse`) or a symmetrisation heuristic of the two."""
    if heuristic not in CHOICES:
        raise ValueError(f"symmetrisation must be one of {', '.join(CHOICES)}; got {heuristic!r}")
    if heuristic == "forward":
        return [set(a) for a in forward]
    if heuristic == "reverse":
        return [set(b) for b in reverse]
    return [symmetrise(a, b, heuristic) for a, b in zip(forward, reverse)]


def align_pairs(pairs: Sequence[tuple[str, str]], backend: str | None = None,
                heuristic: str = "grow-diag-final-and", iterations: int = 0,
                also: Sequence[tuple[str, str]] = ()) -> list[set[Link]]:
    """Links (source word, target word) of each pair: `directions`, then `combine` with `heuristic`."""
    if heuristic not in CHOICES:
        raise ValueError(f"symmetrisation must be one of {', '.join(CHOICES)}; got {heuristic!r}")
    return combine(*directions(pairs, backend, iterations, also), heuristic)
