"""Checkpoint folders (docs/formats.md): config.json, model.safetensors, source.model, target.model, card.json,
train_log.csv. Loading reads tensors with safetensors and JSON with json: nothing is ever unpickled."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.tokenizer import SubwordTokenizer
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.builtin.word_counts import WORDS_FILE, read_counts, write_counts
from attention_lens.model.engine.errors import WEIGHTS, CheckpointError, refuse_pickles
from attention_lens.model.engine.safety import check_layers, check_size, compare, module_shapes, read_header
from safetensors import SafetensorError
from safetensors.torch import load_file, save_file
from torch.overrides import TorchFunctionMode

CONFIG, SOURCE_SPM, TARGET_SPM, CARD, LOG = ("config.json", "source.model", "target.model", "card.json",
                                            "train_log.csv")


@dataclass
class Checkpoint:
    config: ModelConfig
    model: Transformer
    source_tokenizer: SubwordTokenizer
    target_tokenizer: SubwordTokenizer
    card: dict[str, Any]
    path: Path | None = None
    # How often each source word occurred in training (WORDS_FILE); None for a checkpoint without the file.
    source_counts: dict[str, int] | None = None


def is_builtin_checkpoint(folder: Path) -> bool:
    folder = Path(folder)
    return (folder / SOURCE_SPM).is_file() or (folder / TARGET_SPM).is_file() or (
        (folder / CONFIG).is_file() and "src_vocab_size" in (folder / CONFIG).read_text(errors="replace"))


def save_checkpoint(folder: Path, model: Transformer, src_tok: SubwordTokenizer, tgt_tok: SubwordTokenizer,
                    card: dict[str, Any], dtype: torch.dtype = torch.float32,
                    source_counts: Counter[str] | None = None) -> None:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    model.cfg.to_json(folder / CONFIG)
    tensors = {k: v.detach().to(dtype).contiguous() for k, v in model.state_dict().items()}
    save_file(tensors, str(folder / WEIGHTS), metadata={"format": "pt"})
    src_tok.save(folder / SOURCE_SPM)
    tgt_tok.save(folder / TARGET_SPM)
    (folder / CARD).write_text(json.dumps(card, indent=2, sort_keys=True, ensure_ascii=False) + "\n")
    if source_counts is not None:
        write_counts(folder / WORDS_FILE, source_counts)


class _SkipInit(TorchFunctionMode):
    """A mode (this thread only) in which torch.nn.init's in-place initialisers return their tensor untouched. A
    model built on the meta device has no values to draw, and drawing them cost ~1 s: the meta normal_ of the
    embeddings goes through torch._refs, which imports torch._dynamo the first time."""

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__module__", None) == "torch.nn.init" and func.__name__.endswith("_"):
            return args[0] if args else kwargs["tensor"]
        return func(*args, **kwargs)


def meta_skeleton(cfg: ModelConfig) -> Transformer:
    """The model `cfg` describes on the meta device (shapes, no storage, no initial values drawn)."""
    with torch.device("meta"), _SkipInit():
        return Transformer(cfg)


def check_weights(folder: Path, cfg: ModelConfig) -> None:
    """Before any memory is allocated for the model: its size against the limit, and the safetensors header
    against the shapes config.json implies (the model built on the meta device), naming any disagreement."""
    check_layers(str(folder), n_encoder_layers=cfg.n_encoder_layers, n_decoder_layers=cfg.n_decoder_layers)
    skeleton = meta_skeleton(cfg)
    expected, tied, n_params = module_shapes(skeleton)
    check_size(str(folder), n_params, (folder / WEIGHTS).stat().st_size)
    compare(str(folder), expected, read_header(folder / WEIGHTS, len(expected)), tied)


def load_checkpoint(folder: Path) -> Checkpoint:
    """Load a built-in checkpoint folder, strictly: every weight present, every shape as the config says."""
    folder = Path(folder)
    if not folder.is_dir():
        raise CheckpointError(f"{folder} is not a folder")
    refuse_pickles(folder)
    for name in (CONFIG, WEIGHTS, SOURCE_SPM, TARGET_SPM):
        if not (folder / name).is_file():
            raise CheckpointError(f"{folder} is not a model folder of this project: {name} is missing")
    try:
        cfg = ModelConfig.from_json(folder / CONFIG)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from exc
    check_weights(folder, cfg)
    try:
        tensors = load_file(str(folder / WEIGHTS))
    except (SafetensorError, OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(f"{folder / WEIGHTS} is corrupt or truncated ({exc})") from exc
    model = Transformer(cfg)
    model.load_state_dict({k: v.float() for k, v in tensors.items()}, strict=True)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    try:
        src_tok = SubwordTokenizer.from_file(folder / SOURCE_SPM)
        tgt_tok = SubwordTokenizer.from_file(folder / TARGET_SPM)
    except ValueError as exc:
        raise CheckpointError(str(exc)) from exc
    if src_tok.vocab_size != cfg.src_vocab_size or tgt_tok.vocab_size != cfg.tgt_vocab_size:
        raise CheckpointError(f"{folder}: tokenizer vocabularies ({src_tok.vocab_size}, {tgt_tok.vocab_size}) "
                              f"disagree with config.json ({cfg.src_vocab_size}, {cfg.tgt_vocab_size})")
    card = {}
    if (folder / CARD).is_file():
        try:
            card = json.loads((folder / CARD).read_text())
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{folder / CARD} is not valid JSON ({exc})") from exc
        if not isinstance(card, dict):
            raise CheckpointError(f"{folder / CARD} must hold a JSON object, not {type(card).__name__}")
    counts = None
    if (folder / WORDS_FILE).is_file():
        try:
            counts = read_counts(folder / WORDS_FILE)
        except (ValueError, UnicodeDecodeError) as exc:
            raise CheckpointError(f"{folder / WORDS_FILE} is not a word list ({exc})") from exc
    return Checkpoint(cfg, model, src_tok, tgt_tok, card, folder, counts)
