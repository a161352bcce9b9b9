"""Registry of the subcommands defined outside cli.py (train, eval, align, probe).

Each entry is a function taking the argparse subparsers object and adding one command to it.
"""

from __future__ import annotations

REGISTRY: list = []
