"""What several commands share: the model options (--model, --allow-hub) and opening the model they name, and
reading a file of sentence pairs. Heavy modules are imported when a command runs, so `--help` stays quick."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from model.corpora import Example
    from model.engine import Engine


def add_model(p: argparse.ArgumentParser) -> None:
    """--model (required) and --allow-hub."""
    p.add_argument("--model", required=True, help="checkpoint folder (ours) or Hugging Face model folder / hub id")
    p.add_argument("--allow-hub", action="store_true", help="allow downloading a hub id (needs the network)")


def open_model(args: argparse.Namespace) -> Engine:
    """The engine of args.model (model.engine.loader.load_engine; a hub id only with --allow-hub)."""
    from model.engine.loader import load_engine

    return load_engine(args.model, allow_hub=args.allow_hub)


def read_pairs(path: str, limit: int = 0) -> list[Example]:
    """The sentence pairs of a TSV file (model.corpora.read_tsv), the first `limit` of them when limit > 0;
    ValueError for a file without any."""
    from model.corpora import read_tsv

    rows = read_tsv(Path(path))
    if not rows:
        raise ValueError(f"{path}: no sentence pairs")
    return rows[:limit] if limit else rows
