"""Where a step click's server time goes: py-spy samples the server (only the thread holding the GIL, so
waiting is not counted) while the protocol-level load test steps; prints the functions with the largest
inclusive share of the samples taken inside script runs.

    .venv/bin/pip install py-spy            # not a project dependency
    .venv/bin/python benchmarks/profile_clicks.py --sessions 5 --steps 15
    .venv/bin/python benchmarks/profile_clicks.py --tree /tmp/old-worktree   # another checkout's app

Needs ptrace rights over the server (root, or kernel.yama.ptrace_scope = 0). Prints the load test's JSON
lines, then one JSON line: samples, and the top functions as [name, file, percent of script-run samples].
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import load_test  # noqa: E402

SCRIPT_RUN = "ScriptRunner._run_script "  # py-spy's frame name for one script (or fragment) run


def shares(raw: Path, top: int) -> tuple[int, list[list]]:
    """Inclusive share of each function among the script-run samples of a py-spy raw (collapsed) file."""
    seen: Counter[tuple[str, str]] = Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        if not any(f.startswith(SCRIPT_RUN) for f in frames):
            continue
        total += int(count)
        for name, file in {(f.split(" (")[0], f.split(" (")[-1].split(":")[0].rsplit("/", 1)[-1]) for f in frames}:
            seen[name, file] += int(count)
    return total, [[n, f, round(100 * c / total, 1)] for (n, f), c in seen.most_common(top)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sessions", type=int, default=5)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose app is served")
    parser.add_argument("--top", type=int, default=40)
    args = parser.parse_args()
    spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    tree = args.tree.resolve()
    port = load_test.free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", str(tree / "app" / "streamlit_app.py"), "--server.headless",
           "true", "--server.port", str(port), "--server.address", "127.0.0.1", "--browser.gatherUsageStats",
           "false", "--server.fileWatcherType", "none"]
    server = subprocess.Popen(cmd, cwd=tree, env=load_test.server_env(), stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        load_test.wait_healthy(url, server)
        asyncio.run(load_test.drive(url, 1, 2, 0.5, load_test.TEXT, [server.pid]))  # imports and caches warm
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "clicks.txt"
            recorder = subprocess.Popen([spy, "record", "--pid", str(server.pid), "--gil", "--rate", "200",
                                         "--format", "raw", "--output", str(raw), "--nonblocking"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            report = load_test.run(args.sessions, args.steps, args.interval, url=url, pids=[server.pid])
            recorder.send_signal(2)  # SIGINT: py-spy writes its file and exits
            recorder.wait(timeout=60)
            total, top = shares(raw, args.top)
    finally:
        server.terminate()
        server.wait(timeout=15)
    print(json.dumps(report["details"]))
    print(json.dumps(report["summary"]))
    print(json.dumps({"tree": str(args.tree), "script_run_samples": total, "top": top}))


if __name__ == "__main__":
    main()
