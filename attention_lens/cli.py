"""`attention-lens`: the app, a class's replicas, and every command of the model's command line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

APP_SCRIPT = Path(__file__).resolve().parent.parent / "app" / "streamlit_app.py"


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] == "app":
        command = [sys.executable, "-m", "streamlit", "run", str(APP_SCRIPT), "--server.headless", "true", *args[1:]]
        return subprocess.call(command)
    from attention_lens.model.cli import main as model_main

    return model_main(args)
