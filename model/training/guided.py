"""Guided alignment training (Garg et al. 2019, "Jointly Learning to Align and Translate with Transformer
Models"): one decoder layer's cross-attention head (or the mean of its heads) is trained toward a statistical
aligner's word links while the translation loss is kept.

The links are over whitespace words; attention is over subword pieces. For each target word with at least
one link, the target distribution q over source words is its links normalised (k links: 1/k each). The
attention a decoder row pays to a source word is the sum over that word's pieces (as `align` reads it:
model.analysis.alignment.words), so p = A @ pool. Under the `shift` reading (Chen et al. 2020; `align`'s
default) the rows of a target word are those at which its pieces are the decoder's input; under `plain`, the
rows that predict them. Every such row is trained toward its word's q with

    loss = sum_rows KL(q || p) / rows = sum_rows sum_s q_s (log q_s - log p_s) / rows,

the cross-entropy of the row against q minus q's own entropy, so the loss is exactly 0 when the attention
equals the normalised links and positive otherwise (attention on `</s>` or on an unlinked word is mass
missing from p). Rows of words without links, and sentences whose pieces do not group into their words, are
not supervised.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.analysis.alignment.words import word_groups

READINGS = ("shift", "plain")
EPS = 1e-9


@dataclass(frozen=True)
class Guide:
    """One sentence's supervision: rows[k] (decoder row) is trained toward dist[k] over source words, whose
    pieces are `source_groups` (piece positions)."""

    rows: tuple[int, ...]
    dist: tuple[tuple[float, ...], ...]
    source_groups: tuple[tuple[int, ...], ...]


def sentence_guide(links_text: str, source_pieces: Sequence[str], label_pieces: Sequence[str],
                   n_source_words: int, n_target_words: int, reading: str = "shift",
                   shift: bool = True) -> Guide | None:
    """The Guide of one pair, or None when there is nothing to supervise (no links, the pieces do not group
    into the text's words, a link outside the sentence). source_pieces / label_pieces: the model's pieces
    of source and labels, `</s>` included."""
    if reading not in READINGS:
        raise ValueError(f"alignment reading must be one of {READINGS}, got {reading!r}")
    if not links_text.strip():
        return None
    try:
        gold = parse_pharaoh(links_text)
    except ValueError:
        return None
    src_groups = word_groups(source_pieces)
    tgt_groups = word_groups(label_pieces)
    if len(src_groups) != n_source_words or len(tgt_groups) != n_target_words:
        return None
    if any(i >= n_source_words or j >= n_target_words for i, j in gold.possible):
        return None
    by_target: dict[int, list[int]] = {}
    for i, j in gold.possible:
        by_target.setdefault(j, []).append(i)
    offset = 1 if reading == "shift" and shift else 0
    m = len(label_pieces)
    rows, dist = [], []
    for j, sources in sorted(by_target.items()):
        q = [0.0] * n_source_words
        for i in sources:
            q[i] = 1.0 / len(sources)
        for t in tgt_groups[j]:
            if t + offset < m:
                rows.append(t + offset)
                dist.append(tuple(q))
    if not rows:
        return None
    return Guide(tuple(rows), tuple(dist), tuple(tuple(g) for g in src_groups))


def guide_batch(guides: Sequence[Guide | None], n_pieces: int, m_rows: int) -> tuple[torch.Tensor, ...] | None:
    """Tensors for `alignment_loss` of a padded batch: pool (B, n, W) 0/1 piece-to-word, q (B, m, W) and the
    row mask (B, m). None when no sentence of the batch has a guide."""
    if not any(guides):
        return None
    width = max(len(g.source_groups) for g in guides if g is not None)
    b = len(guides)
    pool = torch.zeros(b, n_pieces, width)
    q = torch.zeros(b, m_rows, width)
    mask = torch.zeros(b, m_rows, dtype=torch.bool)
    for k, g in enumerate(guides):
        if g is None:
            continue
        for w, group in enumerate(g.source_groups):
            pool[k, list(group), w] = 1.0
        for r, d in zip(g.rows, g.dist):
            q[k, r, :len(d)] = torch.tensor(d)
            mask[k, r] = True
    return pool, q, mask


def alignment_loss(attention: torch.Tensor, pool: torch.Tensor, q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean over supervised rows of KL(q || attention pooled to words) (module docstring).

    attention: (B, m, n) one head's weights, or the mean of a layer's heads; pool (B, n, W); q (B, m, W);
    mask (B, m). 0 exactly when every supervised row's word mass equals q."""
    p = torch.bmm(attention.float(), pool)  # (B, m, W)
    terms = torch.where(q > 0, q * (torch.log(q.clamp_min(EPS)) - torch.log(p.clamp_min(EPS))), torch.zeros_like(q))
    rows = terms.sum(-1)[mask]
    return rows.mean() if rows.numel() else attention.new_zeros(())


def read_links(data: str | Path, links: str | Path) -> dict[tuple[str, str], str]:
    """Links of each (source, target) pair of a parallel file: `links` holds one Pharaoh line per pair of
    `data` (model.corpora.read_tsv's pairs, in order; an empty line: no links). Raises ValueError when the
    counts differ."""
    from attention_lens.model.corpora import read_tsv

    rows = read_tsv(Path(data))
    with open(links, encoding="utf-8") as fh:
        lines = [line.rstrip("\r\n") for line in fh]
    if len(lines) != len(rows):
        raise ValueError(f"{links} has {len(lines)} lines but {data} has {len(rows)} sentence pairs; the links "
                         f"file needs one line per pair (python -m model aligner --data {data} writes one)")
    out: dict[tuple[str, str], str] = {}
    for row, line in zip(rows, lines):
        if line.strip():
            out.setdefault((row.source, row.target), line)
    return out


def join_linked_pairs(pairs: Sequence[tuple[str, str, str]]) -> tuple[str, str, str]:
    """(source, target, Pharaoh links) of several linked pairs joined into one longer pair: the sentences
    joined by a space, each pair's links moved by the words before it on each side, so every link still joins
    the same two words. Possible links (`i?j`) stay possible."""
    sources, targets, links = [], [], []
    n_src = n_tgt = 0
    for source, target, text in pairs:
        gold = parse_pharaoh(text)
        gold.check(len(source.split()), len(target.split()))
        links.extend(f"{i + n_src}{'-' if (i, j) in gold.sure else '?'}{j + n_tgt}" for i, j in sorted(gold.possible))
        sources.append(source.strip())
        targets.append(target.strip())
        n_src += len(source.split())
        n_tgt += len(target.split())
    return " ".join(sources), " ".join(targets), " ".join(links)


def build_guides(rows: Sequence[tuple[str, str]], links: dict[tuple[str, str], str], src_tok, tgt_tok,
                 limit: int, eos_piece: str, reading: str, shift: bool) -> list[Guide | None]:
    """A Guide (or None) for each training pair, from its links and the model's pieces; `limit`: the pieces
    kept per side before `</s>` (as the training loop cuts them)."""
    out: list[Guide | None] = []
    for s, t in rows:
        text = links.get((s, t), "")
        if not text:
            out.append(None)
            continue
        src_pieces = [*src_tok.encode(s).pieces[:limit], eos_piece]
        lab_pieces = [*tgt_tok.encode(t).pieces[:limit], eos_piece]
        out.append(sentence_guide(text, src_pieces, lab_pieces, len(s.split()), len(t.split()), reading, shift))
    return out


def head_attention(cross_attentions: Sequence[torch.Tensor], layer: int, head: int) -> torch.Tensor:
    """(B, m, n): the 1-based `layer`'s cross-attention, one 1-based `head` or (head 0) the mean of its heads."""
    w = cross_attentions[layer - 1]
    return w.mean(dim=1) if head == 0 else w[:, head - 1]


def check_selection(layer: int, head: int, n_layers: int, n_heads: int) -> None:
    if not 1 <= layer <= n_layers:
        raise ValueError(f"--align-layer must be a decoder layer 1..{n_layers}, got {layer}")
    if not 0 <= head <= n_heads:
        raise ValueError(f"--align-head must be a head 1..{n_heads} (or 0 for the mean of the layer's heads), "
                         f"got {head}")
