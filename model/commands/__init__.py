"""Subcommands of `python -m model` beyond `trace`; each module has `register(subparsers)`."""

from model.commands import align_cmd, corpus_cmd, eval_cmd, probe_cmd, train_cmd

REGISTRY = [train_cmd.register, eval_cmd.register, corpus_cmd.register, probe_cmd.register, align_cmd.register]
