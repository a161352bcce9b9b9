"""Subcommands of `python -m model` beyond `trace`; each module has `register(subparsers)`."""

from model.commands import corpus_cmd, eval_cmd, train_cmd

REGISTRY = [train_cmd.register, eval_cmd.register, corpus_cmd.register]
