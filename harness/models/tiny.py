"""A tiny random-weight checkpoint of our Transformer (no training), built in seconds, on six sentence pairs."""

from __future__ import annotations

from pathlib import Path

import torch
from attention_lens.model.builtin.checkpoint import save_checkpoint
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.builtin.transformer import Transformer

SOURCES = ["the cat sat .", "the black cat sat on the mat .", "the dog that the cat chased barked .",
           "the man found the bank .", "the dog sat near the bank of the river .", "a small bird sings ."]
TARGETS = ["le chat s' assit .", "le chat noir s' assit sur le tapis .", "le chien que le chat chassa aboya .",
           "l' homme trouva la banque .", "le chien s' assit près de la rive de la rivière .",
           "un petit oiseau chante ."]


def build_tiny_checkpoint(folder: Path, seed: int = 0, **overrides) -> Path:
    """A random checkpoint of 2 + 2 layers, 4 heads, d_model 32 (any ModelConfig field in `overrides`) with
    tokenizers trained on SOURCES and TARGETS, saved into `folder`."""
    torch.manual_seed(seed)
    src_tok = train_tokenizer(SOURCES * 4, vocab_size=60)
    tgt_tok = train_tokenizer(TARGETS * 4, vocab_size=70)
    params = dict(src_vocab_size=src_tok.vocab_size, tgt_vocab_size=tgt_tok.vocab_size, d_model=32,
                  n_heads=4, n_encoder_layers=2, n_decoder_layers=2, d_ff=64, dropout=0.0, max_positions=64)
    params.update(overrides)
    model = Transformer(ModelConfig(**params)).eval()
    save_checkpoint(folder, model, src_tok, tgt_tok, {"pair": "en-fr", "variant": "healthy", "random": True})
    return folder
