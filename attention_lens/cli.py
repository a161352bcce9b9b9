"""`attention-lens`: the app, a class's replicas, and every command of the model's command line
(`python -m model`), with one --help for all of them."""

from __future__ import annotations

import argparse
import os
import sys
from importlib.util import find_spec
from pathlib import Path

PROG = "attention-lens"
ROOT = Path(__file__).resolve().parent.parent
# The app's entry script inside the package attention_lens.app: the repository's app/ in a checkout, an
# installed wheel's attention_lens/app/ otherwise.
APP_SCRIPT = Path(find_spec("attention_lens.app").origin).parent / "streamlit_app.py"
SERVE_SCRIPT = ROOT / "deploy" / "serve.py"  # a checkout's (nginx's configuration is not in the wheel)
HELP = ("-h", "--help")


def build_parser() -> argparse.ArgumentParser:
    """The model's command line (model.cli.build_parser) under this program's name, with `app` and `serve`
    listed first."""
    from attention_lens.model.cli import UserHelp
    from attention_lens.model.cli import build_parser as model_parser

    parser = model_parser(PROG)
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    sub.add_parser(
        "app", help="start the app in your browser (http://localhost:8501)", formatter_class=UserHelp,
        description="Start the Attention Lens app (Streamlit) on the everyday English-French model: step through "
                    "a translation's attention, break the causal mask, score alignments, rank heads. Any other "
                    "option goes to `streamlit run` (--server.port, --server.address). Which models it offers, "
                    "and the server's settings: docs/operating.md.",
        epilog="""examples:
  %(prog)s                                 http://localhost:8501
  %(prog)s --server.port 8600
  LENS_HF_MODELS=/srv/models/opus-mt-en-de %(prog)s --server.address 0.0.0.0""")
    sub.add_parser("serve", help="run K replicas of the app behind nginx, for a class", add_help=False)
    sub._choices_actions[:0] = [sub._choices_actions.pop(), sub._choices_actions.pop()][::-1]
    return parser


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    # app and serve replace this process (as ./run.sh's exec does), so Ctrl-C and SIGTERM reach them directly.
    if args[:1] == ["app"] and not set(args[1:2]) & set(HELP):
        os.execv(sys.executable, [sys.executable, "-m", "attention_lens.launch", "run", str(APP_SCRIPT),
                                  "--server.headless", "true", *args[1:]])
    if args[:1] == ["serve"]:  # deploy/serve.py's own options and --help
        os.execv(sys.executable, [sys.executable, str(SERVE_SCRIPT), *args[1:]])
    build_parser().parse_args(args)  # --help, or a clear error for an unknown command or option
    from attention_lens.model.cli import main as model_main

    return model_main(args, prog=PROG)
