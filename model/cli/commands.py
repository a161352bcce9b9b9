"""Subcommands of `python -m model` beyond `trace`; each module has `register(subparsers)`."""

from attention_lens.model.cli import align, aligner, corpus, eval, heads, merge, probe, speech, train

REGISTRY = [train.register, eval.register, corpus.register, probe.register, align.register, heads.register,
            aligner.register, merge.register, speech.register]
