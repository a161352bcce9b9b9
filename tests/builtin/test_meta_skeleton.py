"""The meta-device model a checkpoint's weights are checked against is built without drawing initial values:
the same shapes and ties as a meta model built the ordinary way, no torch._dynamo import (the meta normal_ of
the embeddings imported it: ~1 s of every model load), and models built afterwards are initialised as before."""

from __future__ import annotations

import subprocess
import sys

import torch
from attention_lens.model.builtin.checkpoint import meta_skeleton
from attention_lens.model.builtin.config import ModelConfig
from attention_lens.model.builtin.transformer import Transformer
from attention_lens.model.engine.safety import module_shapes


def test_the_skeleton_has_the_shapes_of_an_ordinary_meta_model(tiny_ckpt):
    cfg = ModelConfig.from_json(tiny_ckpt / "config.json")
    with torch.device("meta"):
        ordinary = Transformer(cfg)
    skeleton = meta_skeleton(cfg)
    assert module_shapes(skeleton) == module_shapes(ordinary)
    assert all(p.is_meta for p in skeleton.parameters())
    torch.manual_seed(0)
    after = Transformer(cfg)  # outside the skeleton's mode: drawn as always
    torch.manual_seed(0)
    reference = Transformer(cfg)
    for a, b in zip(after.parameters(), reference.parameters()):
        assert torch.equal(a, b)
    assert after.src_embed.weight.std() > 0


def test_loading_a_checkpoint_does_not_import_dynamo(tiny_ckpt):
    code = ("import sys\nfrom attention_lens.model.builtin.checkpoint import load_checkpoint\n"
            f"load_checkpoint({str(tiny_ckpt)!r})\nprint('torch._dynamo' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False", out.stderr
