"""Training: a built-in pair or a user's TSV, in one of four variants (healthy, no-causal-mask, no-shift,
no-scaling).

The two broken variants reproduce the silent bugs of the references: trained without the decoder's causal
mask, or with the target not shifted right, the model scores near-perfectly under teacher forcing, because
it can read the answer, and collapses when it has to generate. The no-scaling variant leaves out the
attention's 1/sqrt(d_k) (its checkpoint's config says scaled: false, so it also runs that way).
"""

from __future__ import annotations

import csv
import random
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
from attention_lens.model.analysis.card_pages import card_pages, sample_of_examples, trained_on_a_file
from attention_lens.model.analysis.leakage import CARD_SAMPLE
from attention_lens.model.analysis.scores import evaluate, rounded, text_scores, translate_all
from attention_lens.model.builtin.batch import decoder_inputs
from attention_lens.model.builtin.checkpoint import LOG, Checkpoint, load_checkpoint, save_checkpoint
from attention_lens.model.builtin.config import ARCHITECTURE, ModelConfig
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.builtin.word_counts import count_words
from attention_lens.model.corpora import PAIRS, Example
from attention_lens.model.engine.masks import decoder_self_mask
from attention_lens.model.engine.tensors import pad_batch
from attention_lens.model.training.guided import (
    alignment_loss,
    build_guides,
    check_selection,
    guide_batch,
    head_attention,
    read_links,
)
from attention_lens.model.training.start_data import describe as describe_start_overlap
from torch import nn
from tqdm import tqdm

PRECISIONS = ("auto", "bf16", "fp16", "off")
VARIANTS = {"healthy": (True, True), "no-causal-mask": (False, True), "no-shift": (True, False),
            "no-scaling": (True, True)}  # (causal, shift)
UNSCALED = frozenset({"no-scaling"})  # variants whose attention scores are not divided by sqrt(d_k)


@dataclass(frozen=True)
class TrainConfig:
    variant: str = "healthy"
    steps: int = 6000
    batch_size: int = 64
    lr: float = 1e-3
    warmup: int = 400
    label_smoothing: float = 0.1
    eval_every: int = 500
    em_sample: int = 200
    seed: int = 0
    vocab_size: int = 1000  # the size each new tokenizer is trained to (not with init_from)
    # ModelConfig's dimensions (model.builtin.config.ARCHITECTURE: d_model, n_heads, ...) where they differ
    # from its defaults; with init_from the start's own dimensions are used instead
    architecture: dict[str, Any] = field(default_factory=dict)
    dtype: str = "float16"
    threads: int = 1
    time_budget: float = 0.0  # seconds of training loop; stop after the step that spends it (0: no limit)
    ema: float = 0.0  # decay of an exponential moving average of the weights, validated and saved (0: off)
    raw_text: bool = False  # text as people type it: no corpus-convention normalisation, an NFKC tokenizer
    init_from: str = ""  # a checkpoint folder to start from: its tokenizers, dimensions and weights
    # guided alignment (model.training.guided): a Pharaoh file with one line per pair of the data file; the
    # 1-based decoder layer and head (0: the layer's mean) whose cross-attention is trained toward its links
    align_links: str = ""
    align_layer: int = 2
    align_head: int = 1
    align_weight: float = 1.0
    align_reading: str = "shift"
    # more training pairs for guided alignment (a TSV, e.g. the training pairs written another way) with their
    # own links file, one line per pair; added to the training split only
    align_extra: str = ""
    align_extra_links: str = ""
    align_extra_translation: bool = True  # False: the extra pairs train the alignment only, not the translation
    # word-level knowledge distillation (model.training.distill): a frozen teacher checkpoint of the same tokenizers;
    # the pairs trained for translation add distill_weight x KL(teacher || student) per target token to the loss
    distill_from: str = ""
    distill_weight: float = 0.0
    # Where the steps run (model.engine.device.resolve_device: cpu, cuda[:N], mps, auto); mixed precision on a
    # GPU (PRECISIONS: auto = bf16 where the card has it, else fp16 with loss scaling; off = float32; the CPU
    # always trains in float32); batch_tokens > 0: a batch holds at most that many padded tokens (its longest
    # source plus longest target, times its sentences) instead of batch_size sentences.
    device: str = "cpu"
    precision: str = "auto"
    batch_tokens: int = 0

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {sorted(VARIANTS)}, got {self.variant!r}")
        if self.steps < 1 or self.batch_size < 1:
            raise ValueError("steps and batch_size must be positive")
        if not 0.0 <= self.ema < 1.0:
            raise ValueError(f"ema must be in [0, 1), got {self.ema!r}")
        if self.dtype not in ("float16", "float32"):
            raise ValueError("dtype must be float16 or float32")
        if self.precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {PRECISIONS}, got {self.precision!r}")
        if self.batch_tokens < 0:
            raise ValueError("batch_tokens must be 0 (batches of batch_size sentences) or positive")
        if bool(self.align_extra) != bool(self.align_extra_links) or (self.align_extra and not self.align_links):
            raise ValueError("align_extra needs align_extra_links (one line per pair) and align_links")
        if bool(self.distill_from) != (self.distill_weight > 0):
            raise ValueError("distill_from (a teacher checkpoint) and a positive distill_weight go together, got "
                             f"{self.distill_from!r} and {self.distill_weight!r}")
        if self.align_links and self.align_weight <= 0:
            raise ValueError(f"align_weight must be positive with align_links, got {self.align_weight!r}")
        unknown = sorted(set(self.architecture) - set(ARCHITECTURE))
        if unknown:
            raise ValueError(f"architecture: {unknown} are not among {ARCHITECTURE}")

    def card_fields(self, cfg: ModelConfig) -> dict[str, Any]:
        """What a card records as its train_config: these settings, with the dimensions actually trained
        (`cfg`, the start's with init_from) in place of the ones asked for, and both vocabulary sizes."""
        settings = {k: getattr(self, k) for k in self.__dataclass_fields__ if k not in ("architecture", "vocab_size")
                    and (self.align_links or not k.startswith("align_"))
                    and (self.distill_from or not k.startswith("distill_"))}
        return {**settings, **{k: getattr(cfg, k) for k in ARCHITECTURE},
                "src_vocab_size": cfg.src_vocab_size, "tgt_vocab_size": cfg.tgt_vocab_size}


def length_buckets(lengths: list[int], batch_size: int, rng: random.Random) -> list[list[int]]:
    """One epoch of batches of similar source length (less padding), in random order."""
    order = list(range(len(lengths)))
    rng.shuffle(order)
    chunk = batch_size * 50
    batches = []
    for i in range(0, len(order), chunk):
        part = sorted(order[i:i + chunk], key=lambda j: lengths[j])
        batches.extend(part[k:k + batch_size] for k in range(0, len(part), batch_size))
    rng.shuffle(batches)
    return batches


def token_buckets(src_lengths: list[int], tgt_lengths: list[int], batch_tokens: int,
                  rng: random.Random) -> list[list[int]]:
    """One epoch of batches of similar length, each at most batch_tokens padded tokens (longest source plus
    longest target, times the batch's sentences; a longer pair goes alone), in random order."""
    order = list(range(len(src_lengths)))
    rng.shuffle(order)
    chunk = 8192
    batches = []
    for i in range(0, len(order), chunk):
        part = sorted(order[i:i + chunk], key=lambda j: (src_lengths[j], tgt_lengths[j]))
        batch: list[int] = []
        long_src = long_tgt = 0
        for j in part:
            s, t = max(long_src, src_lengths[j]), max(long_tgt, tgt_lengths[j])
            if batch and (s + t) * (len(batch) + 1) > batch_tokens:
                batches.append(batch)
                batch, s, t = [], src_lengths[j], tgt_lengths[j]
            batch.append(j)
            long_src, long_tgt = s, t
        if batch:
            batches.append(batch)
    rng.shuffle(batches)
    return batches


def autocast_dtype(precision: str, device: torch.device) -> torch.dtype | None:
    """The autocast dtype of mixed precision on `device`, or None for float32 (the CPU, or precision off)."""
    if device.type != "cuda" or precision == "off":
        return None
    if precision == "bf16" or (precision == "auto" and torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float16


def _lr_at(step: int, tc: TrainConfig, elapsed: float = 0.0) -> float:
    """Linear warm-up, then linear decay to 10% of the peak, over the steps or the time budget, whichever
    runs out first (a run cut short by its budget still ends at the low learning rate)."""
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    frac = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    if tc.time_budget > 0:
        frac = max(frac, elapsed / tc.time_budget)
    return tc.lr * (1.0 - 0.9 * min(frac, 1.0))


def train(splits: dict[str, list[tuple[str, str]]], out: Path, tc: TrainConfig, meta: dict[str, Any],
          progress: bool = True) -> dict[str, Any]:
    """Train, write the checkpoint folder (weights, tokenizers, card, CSV log) and return the card.

    On as many intra-op threads as asked (default 1) while it trains, torch's own count restored after it: more
    pay only on cores nothing else uses, since OpenMP's threads spin and wait for each other when they share
    cores with other work (README, "Grammar models")."""
    from attention_lens.model.engine.device import torch_threads

    with torch_threads(tc.threads):
        return _train(splits, out, tc, meta, progress)


def _mean(values: list[float]) -> float:
    """The mean of a card's logged losses, to 5 decimals (0 for none)."""
    return round(sum(values) / max(1, len(values)), 5)


def _ends(values: list[float]) -> tuple[float, float, str]:
    """The means of a loss logged per step over the first and the last k steps, and which steps they are: k =
    100, or half the steps when fewer than 200 ran, so that the two never share a step (one step: both are it)."""
    k = max(1, min(100, len(values) // 2))
    return _mean(values[:k]), _mean(values[-k:]), f"the first {k} and the last {k} of {len(values)} steps"


def _train(splits: dict[str, list[tuple[str, str]]], out: Path, tc: TrainConfig, meta: dict[str, Any],
           progress: bool) -> dict[str, Any]:
    """Set the run up, train it, describe it in its card, save it and measure the saved model."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    run = _set_up(splits, tc, meta)
    batch_loss = _BatchLoss(run)
    trained = _fit(run, batch_loss, out / LOG, splits["valid"], meta, len(splits["test"]), progress)
    card = _card(run, trained, batch_loss.align_seen, meta, splits)
    return _save_and_measure(run, card, out, splits, progress)


@dataclass
class _Run:
    """What a training run is set up with (_set_up): its device and precision, its pairs and their pieces, its
    tokenizers and dimensions, what guides it (guided alignment's links, a distillation teacher) and the model."""

    tc: TrainConfig
    device: torch.device
    amp: torch.dtype | None  # the autocast dtype (autocast_dtype), None for float32
    causal: bool
    shift: bool
    train_rows: list[tuple[str, str]]  # the training split, then the extra pairs (align_extra), if any
    extra_rows: list[tuple[str, str]]
    n_split: int  # rows of train_rows from this index on are the extra pairs
    n_translated: int  # the pairs trained for translation (the card's train_pairs, the word counts)
    start: Checkpoint | None  # init_from's checkpoint
    src_tok: Any
    tgt_tok: Any
    cfg: ModelConfig
    train_src: list[list[int]]
    train_lab: list[list[int]]
    valid_src: list[list[int]]
    valid_lab: list[list[int]]
    guides: list | None  # each training pair's Guide (guided alignment), or None
    anchor: Any  # the distillation teacher (model.training.distill.Anchor), or None
    model: Transformer


def _set_up(splits: dict[str, list[tuple[str, str]]], tc: TrainConfig, meta: dict[str, Any]) -> _Run:
    """Everything the steps need, checked before any step runs (an absent device, a mismatched teacher: one clear
    error first). torch's generator is seeded first, and the start's, the teacher's and the new model's weights
    are made in that order, so a run's initial weights depend on its seed and settings only."""
    torch.manual_seed(tc.seed)
    from attention_lens.model.engine.device import resolve_device

    device = resolve_device(tc.device)
    causal, shift = VARIANTS[tc.variant]
    train_rows, valid_rows = splits["train"], splits["valid"]
    extra_rows: list[tuple[str, str]] = []
    n_split = len(train_rows)
    if tc.align_extra:
        from attention_lens.model.corpora import read_tsv

        extra_rows = [(e.source, e.target) for e in read_tsv(Path(tc.align_extra))]
        train_rows = [*train_rows, *extra_rows]
    # alignment-only extras are not trained for translation
    n_translated = len(train_rows) if tc.align_extra_translation else n_split
    start = load_checkpoint(Path(tc.init_from)) if tc.init_from else None
    if start is not None:  # continue a run (or turn a healthy model into a broken variant): same vocabulary
        src_tok, tgt_tok = start.source_tokenizer, start.target_tokenizer
    else:
        src_tok = train_tokenizer([s for s, _ in train_rows], tc.vocab_size, tc.raw_text)
        tgt_tok = train_tokenizer([t for _, t in train_rows], tc.vocab_size, tc.raw_text)
    cfg = start.config if start is not None else ModelConfig(
        src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, scaled=tc.variant not in UNSCALED,
        **tc.architecture)
    limit = cfg.max_positions - 1

    def encode(rows):
        return ([[*src_tok.encode(s).ids[:limit], cfg.eos_id] for s, _ in rows],
                [[*tgt_tok.encode(t).ids[:limit], cfg.eos_id] for _, t in rows])

    train_src, train_lab = encode(train_rows)
    valid_src, valid_lab = encode(valid_rows[:500])
    guides = _guides(train_rows, tc, meta, src_tok, tgt_tok, cfg, shift) if tc.align_links else None
    anchor = None
    if tc.distill_from:
        from attention_lens.model.training.distill import Anchor, load_teacher

        anchor = Anchor(load_teacher(tc.distill_from, src_tok, tgt_tok, tc.raw_text).model.to(device), cfg.pad_id)
    model = Transformer(cfg)
    if start is not None:
        model.load_state_dict(start.model.state_dict(), strict=True)
    model.to(device)
    return _Run(tc, device, autocast_dtype(tc.precision, device), causal, shift, train_rows, extra_rows, n_split,
                n_translated, start, src_tok, tgt_tok, cfg, train_src, train_lab, valid_src, valid_lab, guides, anchor,
                model)


class _BatchLoss:
    """The loss of one batch of (source pieces, label pieces) under a loss function, with the logits and padded
    labels (B, T) it was computed from."""

    def __init__(self, run: _Run) -> None:
        self.run = run
        self.align_seen: list[float] = []  # each training step's alignment loss (guided alignment), for the card

    def __call__(self, srcs, labs, fn, guide=None, no_translation=None, distill=False):
        """guide: the batch's Guides (guided alignment), or None; with one the loss adds align_weight times
        the alignment loss, kept in align_seen for the log. no_translation: per row, True where the row's
        translation loss is left out (extra pairs that train the alignment only). distill (training batches, with a
        teacher): the loss adds distill_weight times KL(teacher || student) over the target tokens of the rows
        trained for translation (the teacher reads only those rows)."""
        run, cfg, device, tc, amp = self.run, self.run.cfg, self.run.device, self.run.tc, self.run.amp
        src, src_keep = (t.to(device) for t in pad_batch(srcs, cfg.pad_id))
        dec_in, tgt_keep = (t.to(device) for t in pad_batch([decoder_inputs(lab, cfg, run.shift) for lab in labs],
                                                           cfg.pad_id))
        lab_t = pad_batch(labs, cfg.pad_id)[0].to(device)
        tensors = None if guide is None else guide_batch(guide, src.shape[1], dec_in.shape[1])
        if tensors is not None:
            tensors = tuple(t.to(device) for t in tensors)
        self_mask = decoder_self_mask(tgt_keep, run.causal)
        with torch.autocast(device.type, dtype=amp or torch.float32, enabled=amp is not None):
            enc = run.model.encode(src, src_keep, need_weights=False)
            out_ = run.model.decode(dec_in, enc, self_mask, need_weights=tensors is not None)
        logits = out_.logits.float()
        lab_ce = lab_t
        if no_translation is not None and any(no_translation):
            lab_ce = lab_t.clone()
            lab_ce[torch.tensor(no_translation, device=lab_t.device)] = cfg.pad_id
        if bool((lab_ce != cfg.pad_id).any()):
            loss = fn(logits.reshape(-1, logits.shape[-1]), lab_ce.reshape(-1))
        else:  # every row of the batch trains the alignment only
            loss = logits.sum() * 0.0
        if distill and run.anchor is not None:
            loss = loss + tc.distill_weight * run.anchor.kl(logits, lab_ce, src, src_keep, dec_in, self_mask, amp)
        if tensors is not None:
            term = alignment_loss(head_attention(out_.cross_attentions, tc.align_layer, tc.align_head), *tensors)
            self.align_seen.append(term.item())
            loss = loss + tc.align_weight * term
        return loss, logits, lab_t


@dataclass(frozen=True)
class _Trained:
    """What the steps of a run did: how many ran, in how many seconds, over how many tokens, and the log's steps
    and seconds before them (a continued run's start's)."""

    steps: int
    seconds: float
    tokens: int
    step0: int
    seconds0: float


def _start_log(start: Checkpoint | None) -> tuple[list[dict[str, Any]], int, float]:
    """A continued run's log goes on from its start's: the start's log rows, steps and seconds (none for a new
    run)."""
    if start is None or start.path is None or not (start.path / LOG).is_file():
        return [], 0, 0.0
    with open(start.path / LOG, newline="") as fh:
        rows = [{k: float(v) if "." in v else int(v) for k, v in row.items()} for row in csv.DictReader(fh)]
    return rows, int(start.card.get("steps", 0)), float(start.card.get("train_seconds", 0.0))


def _fit(run: _Run, batch_loss: _BatchLoss, log_path: Path, valid_rows: list[tuple[str, str]], meta: dict[str, Any],
         test_pairs: int, progress: bool) -> _Trained:
    """The training steps: batches of similar length, the learning-rate schedule, gradient clipping, the moving
    average of the weights (ema), and every eval_every steps (and at the last) a validation row written to the
    log. Leaves the model in eval mode on the CPU, holding the averaged weights when there is an average."""
    tc, model, cfg = run.tc, run.model, run.cfg
    scaler = torch.amp.GradScaler(run.device.type, enabled=run.amp == torch.float16)
    rng = random.Random(tc.seed)
    opt = torch.optim.AdamW(model.parameters(), lr=tc.lr, betas=(0.9, 0.98), eps=1e-9, weight_decay=0.01)
    loss_fn = nn.CrossEntropyLoss(ignore_index=cfg.pad_id, label_smoothing=tc.label_smoothing)
    eval_loss_fn = nn.CrossEntropyLoss(ignore_index=cfg.pad_id, reduction="sum")
    log_rows, step0, seconds0 = _start_log(run.start)
    if "held_out_of_start" in meta:  # said once the run's inputs (data, start, teacher) have all been accepted
        print(describe_start_overlap(meta["held_out_of_start"], test_pairs), file=sys.stderr)
    train_src, train_lab, guides = run.train_src, run.train_lab, run.guides
    t0 = time.perf_counter()
    bar = tqdm(range(tc.steps), desc=f"train {meta.get('pair', 'data')} {tc.variant}", disable=not progress)
    running = None
    batches = iter(())
    params = list(model.parameters())
    shadow = [p.detach().clone() for p in params] if tc.ema else None
    tokens_seen = 0
    for step in bar:
        model.train()
        idx = next(batches, None)
        if idx is None:
            batches = iter(token_buckets([len(s) for s in train_src], [len(t) for t in train_lab], tc.batch_tokens,
                                         rng) if tc.batch_tokens else
                           length_buckets([len(s) for s in train_src], tc.batch_size, rng))
            idx = next(batches)
        for g in opt.param_groups:
            g["lr"] = _lr_at(step, tc, time.perf_counter() - t0)
        loss, _, _ = batch_loss([train_src[i] for i in idx], [train_lab[i] for i in idx], loss_fn,
                                None if guides is None else [guides[i] for i in idx],
                                None if tc.align_extra_translation else [i >= run.n_split for i in idx], distill=True)
        opt.zero_grad(set_to_none=True)
        scaler.scale(loss).backward()  # without fp16 the scaler passes everything through unchanged
        scaler.unscale_(opt)
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        tokens_seen += sum(len(train_src[i]) + len(train_lab[i]) for i in idx)
        if shadow is not None:
            with torch.no_grad():  # the usual warm-up: early on the average follows the weights closely
                torch._foreach_lerp_(shadow, params, 1.0 - min(tc.ema, (1 + step) / (10 + step)))
        running = loss.item() if running is None else 0.95 * running + 0.05 * loss.item()
        over = tc.time_budget > 0 and time.perf_counter() - t0 > tc.time_budget
        last = step + 1 == tc.steps or over
        if (step + 1) % 50 == 0 or last:
            bar.set_postfix(loss=f"{running:.3f}",
                            tok_s=f"{tokens_seen / max(time.perf_counter() - t0, 1e-9):.0f}")
        if (step + 1) % tc.eval_every == 0 or last:
            row = {"step": step0 + step + 1, "train_loss": round(running, 5),
                   "seconds": round(seconds0 + time.perf_counter() - t0, 1)}
            _swap(params, shadow)
            row.update(_validate(model, run.valid_src, run.valid_lab, batch_loss, eval_loss_fn, cfg))
            row.update(_free_running(model, run.src_tok, run.tgt_tok, valid_rows[: tc.em_sample], cfg, tc.raw_text))
            _swap(params, shadow)
            log_rows.append(row)
            _write_log(log_path, log_rows)
            bar.write(f"step {row['step']}: train loss {row['train_loss']:.3f}, valid tf-acc "
                      f"{row['valid_tf_accuracy']:.4f}, valid exact match {row['valid_exact_match']:.3f}, "
                      f"valid chrF {row['valid_chrf']:.1f}")
        if over:
            break
    seconds = time.perf_counter() - t0
    _swap(params, shadow)  # the averaged weights are the model
    model.eval()
    model.to("cpu")
    return _Trained(step + 1, seconds, tokens_seen, step0, seconds0)


def _card(run: _Run, trained: _Trained, align_seen: list[float], meta: dict[str, Any],
          splits: dict[str, list[tuple[str, str]]]) -> dict[str, Any]:
    """The card of a trained run, before its metrics: what it was trained on, how, where and for how long, and what
    its guided alignment or distillation term did (means over the first and the last steps, _ends)."""
    from attention_lens.model.engine.device import device_name

    tc, start, device, seconds = run.tc, run.start, run.device, trained.seconds
    card = {**meta, "text": "raw" if tc.raw_text else "conventions", "variant": tc.variant,
            "trained_causal": run.causal, "trained_shift": run.shift, "steps": trained.step0 + trained.steps,
            "train_seconds": round(trained.seconds0 + seconds, 1),
            "parameters": sum(p.numel() for p in run.model.parameters()), "seed": tc.seed,
            "train_config": tc.card_fields(run.cfg),
            "init_from": ({"path": tc.init_from, "steps": start.card.get("steps"),
                           "train_seconds": start.card.get("train_seconds")} if start is not None else None),
            "train_pairs": run.n_translated, "valid_pairs": len(splits["valid"]), "test_pairs": len(splits["test"]),
            "device": device_name(device) + (f" ({torch.cuda.get_device_name(device)})" if device.type == "cuda"
                                             else ""),
            "precision": {None: "float32", torch.bfloat16: "bf16 autocast", torch.float16: "fp16 autocast"}[run.amp],
            "train_tokens": trained.tokens, "tokens_per_second": round(trained.tokens / max(seconds, 1e-9), 1)}
    if run.guides is not None:  # the alignment loss: its mean over the first and the last 100 steps (_ends)
        first, last, over = _ends(align_seen)
        card["guided_alignment"] = {
            "links": tc.align_links, "layer": tc.align_layer, "head": tc.align_head, "weight": tc.align_weight,
            "reading": tc.align_reading, "supervised_pairs": sum(g is not None for g in run.guides),
            **({"extra": tc.align_extra, "extra_links": tc.align_extra_links, "extra_pairs": len(run.extra_rows),
                "extra_translation": tc.align_extra_translation} if tc.align_extra else {}),
            "loss_first_100": first, "loss_last_100": last, "loss_over": over, "steps": trained.steps,
            "minutes": round(seconds / 60, 1)}
    if run.anchor is not None:  # the KL term: its mean over the first and the last 100 steps that had one (_ends)
        first, last, over = _ends(run.anchor.seen)
        card["distillation"] = {
            "teacher": tc.distill_from, "weight": tc.distill_weight,
            "loss": "label cross-entropy + weight x KL(teacher || student), per target token of the pairs trained "
                    "for translation",
            "kl_first_100": first, "kl_last_100": last, "kl_over": over}
    return card


def _save_and_measure(run: _Run, card: dict[str, Any], out: Path, splits: dict[str, list[tuple[str, str]]],
                      progress: bool) -> dict[str, Any]:
    """Save the checkpoint, then measure it as saved (reloaded, not the weights in memory): test and valid metrics,
    the held-out combinations, a built-in pair's card pages or a file's Broken models' sample; saved again with
    them. Returns the card."""
    tc, model, device, causal, shift = run.tc, run.model, run.device, run.causal, run.shift
    dtype = torch.float16 if tc.dtype == "float16" else torch.float32
    counts = count_words(s for s, _ in run.train_rows[:run.n_translated]) if tc.raw_text else None
    save_checkpoint(out, model, run.src_tok, run.tgt_tok, card, dtype=dtype, source_counts=counts)
    engine = BuiltinEngine.load(out, device=device) if device.type != "cpu" else BuiltinEngine(load_checkpoint(out))
    test = splits["test"]
    metrics = evaluate(engine, [s for s, _ in test], [t for _, t in test], causal, shift, progress=progress)
    valid = splits["valid"][:1000]
    valid_metrics = evaluate(engine, [s for s, _ in valid], [t for _, t in valid], causal, shift, progress=progress)
    card["test_metrics"] = rounded(metrics)
    card["valid_metrics"] = rounded(valid_metrics)
    combos = {name.removeprefix("combo-"): rows for name, rows in splits.items() if name.startswith("combo-")}
    if combos:
        card["combination_metrics"] = {
            name: rounded(evaluate(engine, [s for s, _ in rows], [t for _, t in rows], causal, shift,
                                   progress=progress))
            for name, rows in combos.items()}
    if "data" not in card and card.get("pair") in PAIRS:  # a built-in corpus (a user's TSV: its file's name)
        card.update(card_pages(engine, card["pair"]))
    elif trained_on_a_file(card) and test:  # the Broken models' sample, on the test split held out here
        card[CARD_SAMPLE] = sample_of_examples(engine, [Example(s, t, "") for s, t in test])
    save_checkpoint(out, model, run.src_tok, run.tgt_tok, card, dtype=dtype, source_counts=counts)
    return card


def _guides(rows, tc: TrainConfig, meta: dict[str, Any], src_tok, tgt_tok, cfg: ModelConfig, shift: bool):
    """The Guide of each training pair (model.training.guided) from the links file of meta["data"]."""
    if "data" not in meta:
        raise ValueError("guided alignment needs --data: the links file has one line per pair of that file")
    check_selection(tc.align_layer, tc.align_head, cfg.n_decoder_layers, cfg.n_heads)
    links = read_links(meta["data"], tc.align_links)
    if tc.align_extra:
        links.update(read_links(tc.align_extra, tc.align_extra_links))
    return build_guides(rows, links, src_tok, tgt_tok, cfg.max_positions - 1, src_tok.piece(cfg.eos_id),
                        tc.align_reading, shift)


@torch.no_grad()
def _swap(params: list[torch.Tensor], shadow: list[torch.Tensor] | None) -> None:
    """Exchange the weights with their moving average (no-op without one)."""
    for p, s in zip(params, shadow or ()):
        tmp = p.detach().clone()
        p.copy_(s)
        s.copy_(tmp)


@torch.no_grad()
def _validate(model, srcs, labs, batch_loss, loss_fn, cfg) -> dict[str, float]:
    model.eval()
    total_loss, correct, count = 0.0, 0, 0
    for i in range(0, len(srcs), 128):
        loss, logits, lab_t = batch_loss(srcs[i:i + 128], labs[i:i + 128], loss_fn)
        keep = lab_t != cfg.pad_id
        total_loss += loss.item()
        correct += int(((logits.argmax(-1) == lab_t) & keep).sum())
        count += int(keep.sum())
    return {"valid_tf_loss": round(total_loss / count, 5), "valid_tf_accuracy": round(correct / count, 5)}


@torch.no_grad()
def _free_running(model, src_tok, tgt_tok, rows, cfg, raw_text: bool) -> dict[str, float]:
    """Greedy translations of a validation sample: exact match and chrF (model.analysis.scores), for the
    training curve."""
    model.eval()
    engine = BuiltinEngine(Checkpoint(cfg, model, src_tok, tgt_tok, {"text": "raw" if raw_text else "conventions"}))
    scores = text_scores(translate_all(engine, [s for s, _ in rows]), [t for _, t in rows])
    return {"valid_exact_match": round(scores["exact_match"], 4), "valid_chrf": round(scores["chrf"], 2)}


def _write_log(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="") as fh:
        writer = csv.DictWriter(fh, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
