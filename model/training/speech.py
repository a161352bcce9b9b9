"""Training a small Whisper from scratch on the spoken grammar corpus (`speech-corpus`'s folder).

The model is `transformers`' own `WhisperForConditionalGeneration` (80-bin log-mel, two convolutions, sinusoidal
encoder positions, pre-LN encoder and decoder), with a vocabulary of our own (`model.speech.processor`). It learns
from the precomputed log-mels of `DATA/train/features.npy` with SpecAugment-style time and frequency masks, on
labels `<|en|><|transcribe|><|notimestamps|> text<|endoftext|>` after `<|startoftranscript|>`, beside an
auxiliary CTC loss on the encoder's output (joint CTC–attention training, Watanabe et al. 2017: without it the
decoder sat for 750 steps at the grammar's language-model loss, ignoring the audio; the CTC head is a linear
layer used only in training and not saved, so the folder stays a plain Whisper). The learning rate
warms up, then decays with the time spent over the time budget (cosine), so that a run of any budget ends cool.
Every `eval_every` steps the valid split is transcribed greedily; the checkpoint with the lowest valid WER is
written to OUT as a standard Hugging Face Whisper folder (config, generation config, safetensors, processor
files, card.json), so a usable model exists whenever training stops.
"""

from __future__ import annotations

import csv
import json
import math
import os
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from attention_lens.model.speech.processor import build_config, build_processor
from attention_lens.model.speech.scoring import normalise, transcribe_features, word_error_rate


@dataclass(frozen=True)
class SpeechSetting:
    d_model: int = 192
    encoder_layers: int = 3
    decoder_layers: int = 3
    heads: int = 4
    vocab_size: int = 1000  # BPE pieces at most; the grammar's words need fewer
    batch: int = 16
    lr: float = 1e-3
    warmup_steps: int = 300
    weight_decay: float = 0.01
    time_budget_min: float = 65.0
    threads: int = 2
    seed: int = 0
    eval_every: int = 250
    eval_clips: int = 150
    max_target_positions: int = 64
    bf16: bool = True
    ctc_weight: float = 0.3  # share of an auxiliary CTC loss on the encoder (training only; not saved)
    ctc_units: str = "chars"  # what the CTC head spells: "chars" (letters, space, apostrophe) or "pieces" (BPE)
    ctc_only_steps: int = 0  # first steps that train the encoder alone on CTC (no decoder pass)
    crop: bool = True  # the encoder reads each batch up to its longest clip (a share of batches: the whole window)
    full_window_share: float = 0.25  # batches that keep the whole window, so the padding of inference is seen
    spec_augment: bool = True  # time and frequency masks on the training log-mels


def read_list(path: Path) -> list[tuple[str, str]]:
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 2:
                raise ValueError(f"{path}:{n}: expected clip<TAB>transcript")
            rows.append((cols[0], cols[1]))
    return rows


def spec_augment(x: torch.Tensor, rng: random.Random) -> torch.Tensor:
    """Two frequency masks (≤ 10 bins) and two time masks (≤ 30 frames) per clip, filled with the clip's mean."""
    x = x.clone()
    clips, mels, frames = x.shape
    for i in range(clips):
        fill = x[i].mean()
        for _ in range(2):
            w = rng.randint(0, 10)
            f0 = rng.randint(0, mels - w)
            x[i, f0:f0 + w, :] = fill
            t = rng.randint(0, 30)
            t0 = rng.randint(0, frames - t)
            x[i, :, t0:t0 + t] = fill
    return x


def labels_of(tokenizer, texts: list[str], pad: int) -> torch.Tensor:
    """Token ids after `<|startoftranscript|>` (the model shifts them right itself), -100 where padded."""
    tokenizer.set_prefix_tokens(language="en", task="transcribe", predict_timestamps=False)
    rows = [tokenizer(" " + t).input_ids[1:] for t in texts]
    width = max(map(len, rows))
    out = torch.full((len(rows), width), -100, dtype=torch.long)
    for i, r in enumerate(rows):
        out[i, :len(r)] = torch.tensor(r)
    return out


CTC_CHARS = " abcdefghijklmnopqrstuvwxyz'"  # the character CTC head's classes; blank is the one after them


def char_targets(texts: list[str]) -> list[list[int]]:
    """Each transcript as `CTC_CHARS` indices, normalised as WER is (lowercase, punctuation removed)."""
    return [[CTC_CHARS.index(c) for c in normalise(t) if c in CTC_CHARS] for t in texts]


def piece_targets(labels: torch.Tensor, tokenizer) -> list[list[int]]:
    """The labels' text pieces: without the prefix, special tokens and padding."""
    special = set(tokenizer.all_special_ids)
    return [[int(t) for t in row if t >= 0 and int(t) not in special] for row in labels]


def ctc_loss(logits: torch.Tensor, labels: torch.Tensor | list[list[int]], tokenizer=None) -> torch.Tensor:
    """CTC over every encoder frame of `logits` (clips × frames × classes; blank is the last class). `labels` are
    target index lists, or decoder labels whose text pieces are the targets (with their `tokenizer`)."""
    targets = piece_targets(labels, tokenizer) if isinstance(labels, torch.Tensor) else labels
    flat = torch.tensor([t for row in targets for t in row], dtype=torch.long)
    lengths = torch.tensor([len(row) for row in targets], dtype=torch.long)
    log_probs = torch.log_softmax(logits, dim=-1).transpose(0, 1)  # frames × clips × classes
    frames = torch.full((logits.shape[0],), logits.shape[1], dtype=torch.long)
    return torch.nn.functional.ctc_loss(log_probs, flat, frames, lengths, blank=logits.shape[-1] - 1,
                                        zero_infinity=True)


def encode(encoder, features: torch.Tensor) -> torch.Tensor:
    """`WhisperEncoder`'s forward on log-mels of any even length up to its window (transformers' own forward
    insists on the whole window): the two convolutions, the first positions' sinusoids, the layers, the final
    norm. On the whole window it is the encoder's own `last_hidden_state`."""
    h = torch.nn.functional.gelu(encoder.conv1(features))
    h = torch.nn.functional.gelu(encoder.conv2(h)).permute(0, 2, 1)
    h = h + encoder.embed_positions.weight[: h.shape[1]]
    h = torch.nn.functional.dropout(h, p=encoder.dropout, training=encoder.training)
    for layer in encoder.layers:
        h = layer(h, None)
    return encoder.layer_norm(h)


def crop_frames(seconds: list[float], window_frames: int, rng: random.Random, full_share: float) -> int:
    """Log-mel frames a batch is read to: its longest clip and 0.2 s, even, or the whole window for a
    `full_share` of batches."""
    if rng.random() < full_share:
        return window_frames
    frames = int(math.ceil((max(seconds) + 0.2) * 100 / 2)) * 2
    return max(2, min(window_frames, frames))


def read_seconds(meta: Path, n: int) -> list[float] | None:
    """Each clip's length from speech-corpus's meta.tsv (a `seconds` column), or None where there is none."""
    if not meta.exists():
        return None
    with open(meta, encoding="utf-8") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    if len(rows) != n or "seconds" not in (rows[0] if rows else {}):
        return None
    return [float(r["seconds"]) for r in rows]


def _lr(setting: SpeechSetting, step: int, elapsed_s: float) -> float:
    warm = min(1.0, (step + 1) / setting.warmup_steps)
    done = min(1.0, elapsed_s / (setting.time_budget_min * 60))
    return setting.lr * warm * (0.05 + 0.95 * 0.5 * (1 + math.cos(math.pi * done)))


def _save(model, processor, gen, out: Path, card: dict, history: list[dict]) -> None:
    tmp = out.with_name(out.name + ".partial")
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    model.save_pretrained(tmp)
    gen.save_pretrained(tmp)
    processor.save_pretrained(tmp)
    (tmp / "card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    with open(tmp / "train_log.csv", "w", encoding="utf-8", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(history[0]))
        writer.writeheader()
        writer.writerows(history)
    if out.exists():
        shutil.rmtree(out)
    os.replace(tmp, out)


def train_speech(data: Path, out: Path, setting: SpeechSetting, log=None, init_from: Path | None = None) -> dict:
    """Train on `data` (speech-corpus's folder) for `setting.time_budget_min` minutes; the best checkpoint by
    valid WER is kept in `out`. With `init_from` (a folder this function wrote) training goes on from its
    weights, processor and card (steps and minutes add up; a new warm-up and decay). Returns the best card."""
    from transformers import AutoProcessor, GenerationConfig, WhisperForConditionalGeneration

    log = log or (lambda msg: print(msg, file=sys.stderr, flush=True))
    torch.set_num_threads(setting.threads)
    torch.manual_seed(setting.seed)
    rng = random.Random(setting.seed)
    train_rows = read_list(data / "train" / "list.tsv")
    valid_rows = read_list(data / "valid" / "list.tsv")[: setting.eval_clips]
    feats = np.load(data / "train" / "features.npy", mmap_mode="r")
    valid_feats = np.load(data / "valid" / "features.npy", mmap_mode="r")[: len(valid_rows)]
    if len(feats) != len(train_rows):
        raise ValueError(f"{data / 'train'}: {len(feats)} feature rows for {len(train_rows)} clips")
    window_s = int(round(feats.shape[-1] / 100))
    texts = [t for _, t in train_rows]
    before = {"steps": 0, "clips_seen": 0, "minutes": 0.0, "history": []}
    prior: dict = {}
    if init_from is not None:
        processor = AutoProcessor.from_pretrained(init_from)
        gen = GenerationConfig.from_pretrained(init_from)
        model = WhisperForConditionalGeneration.from_pretrained(init_from)
        prior = json.loads((init_from / "card.json").read_text(encoding="utf-8"))
        with open(init_from / "train_log.csv", encoding="utf-8") as f:
            history_before = [{k: float(v) if k != "steps" else int(v) for k, v in row.items()}
                              for row in csv.DictReader(f)]
        before = {"steps": prior["steps"], "clips_seen": prior["clips_seen"], "minutes": prior["minutes"],
                  "history": history_before}
        setting = replace(setting, d_model=model.config.d_model, encoder_layers=model.config.encoder_layers,
                          decoder_layers=model.config.decoder_layers, heads=model.config.encoder_attention_heads)
        if model.config.max_source_positions != window_s * 50:
            raise ValueError(f"{init_from} has a {model.config.max_source_positions // 50} s window, "
                             f"the data {window_s} s")
    else:
        processor = build_processor([" " + t for t in texts], setting.vocab_size, window_s)
        config, gen = build_config(processor, setting.d_model, setting.encoder_layers, setting.heads, window_s,
                                   setting.max_target_positions, decoder_layers=setting.decoder_layers)
        model = WhisperForConditionalGeneration(config)
    if setting.ctc_units not in ("chars", "pieces"):
        raise ValueError(f"ctc_units must be chars or pieces, not {setting.ctc_units!r}")
    ctc_classes = len(CTC_CHARS) if setting.ctc_units == "chars" else len(processor.tokenizer)
    ctc_head = torch.nn.Linear(setting.d_model, ctc_classes + 1)  # the last class is CTC's blank
    seconds = read_seconds(data / "train" / "meta.tsv", len(train_rows)) if setting.crop else None
    char_rows = char_targets(texts) if setting.ctc_units == "chars" else None
    n_params = sum(p.numel() for p in model.parameters())
    log(f"model: {n_params / 1e6:.2f} M parameters, vocabulary {len(processor.tokenizer)}, window {window_s} s, "
        f"{len(train_rows)} train clips, {len(valid_rows)} valid clips")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2 and "embed_positions" not in n]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    decay += [ctc_head.weight]
    other += [ctc_head.bias]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": setting.weight_decay},
                             {"params": other, "weight_decay": 0.0}], lr=setting.lr, betas=(0.9, 0.98), eps=1e-8)
    model.model.encoder.embed_positions.requires_grad_(False)  # sinusoidal, as Whisper keeps them
    pad = processor.tokenizer.pad_token_id
    order: list[int] = []
    start = time.time()
    # Going on from a folder, its own valid WER is the one to beat: a worse first check must not overwrite it.
    best: dict = {"valid_wer": prior["valid_wer"] if init_from is not None else None}
    step, clips_seen, losses, evaluated_at, history = 0, 0, [], -1, list(before["history"])
    budget_s = setting.time_budget_min * 60
    while True:
        elapsed = time.time() - start
        last = elapsed >= budget_s
        if step > 0 and step != evaluated_at and (last or (step > setting.ctc_only_steps
                                                          and step % setting.eval_every == 0)):
            evaluated_at = step
            wer = word_error_rate([t for _, t in valid_rows],
                                  transcribe_features(model, processor, gen, valid_feats))
            card = {"name": out.name, "architecture": "WhisperForConditionalGeneration",
                    "data": "spoken grammar (espeak-ng), see speech-corpus", "train_clips": len(train_rows),
                    "steps": before["steps"] + step, "clips_seen": before["clips_seen"] + clips_seen,
                    "minutes": round(before["minutes"] + elapsed / 60, 1),
                    "valid_wer": round(wer, 4), "valid_clips": len(valid_rows),
                    "loss": round(float(np.mean(losses[-100:])), 4), "parameters": n_params,
                    "setting": asdict(setting), "window_s": window_s,
                    "init_from": str(init_from) if init_from is not None else None}
            log(f"step {step}: valid WER {wer:.4f} ({elapsed / 60:.1f} min)")
            history.append({key: card[key] for key in ("steps", "minutes", "loss", "valid_wer")})
            if best["valid_wer"] is None or wer <= best["valid_wer"]:
                best = card
                _save(model, processor, gen, out, card, history)
                log(f"saved {out} (valid WER {wer:.4f})")
            model.train()
        if last:
            break
        if len(order) < setting.batch:
            order = list(range(len(train_rows)))
            rng.shuffle(order)
        idx = sorted(order[-setting.batch:])
        del order[-setting.batch:]
        frames = feats.shape[-1]
        if seconds is not None:
            frames = crop_frames([seconds[i] for i in idx], frames, rng, setting.full_window_share)
        x = torch.from_numpy(np.asarray(feats[idx][:, :, :frames], dtype=np.float32))
        if setting.spec_augment:
            x = spec_augment(x, rng)
        y = labels_of(processor.tokenizer, [texts[i] for i in idx], pad)
        ctc_targets = [char_rows[i] for i in idx] if char_rows is not None else y
        for group in opt.param_groups:
            group["lr"] = _lr(setting, step, elapsed)
        model.train()
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=setting.bf16):
            encoded = encode(model.model.encoder, x)
            if step < setting.ctc_only_steps:  # the encoder alone learns to spell what it hears
                loss = ctc_loss(ctc_head(encoded).float(), ctc_targets, processor.tokenizer)
            else:
                loss = model(encoder_outputs=(encoded,), labels=y).loss
                if setting.ctc_weight > 0:
                    loss = (1 - setting.ctc_weight) * loss + setting.ctc_weight * ctc_loss(
                        ctc_head(encoded).float(), ctc_targets, processor.tokenizer)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        clips_seen += len(idx)
        losses.append(loss.item())
        if step % 25 == 0:
            stage = " (CTC only)" if step <= setting.ctc_only_steps else ""
            log(f"step {step}: loss{stage} {np.mean(losses[-25:]):.4f} lr {opt.param_groups[0]['lr']:.2e} "
                f"{clips_seen / (time.time() - start):.1f} clips/s {(time.time() - start) / 60:.1f} min")
    return best
