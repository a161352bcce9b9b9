"""Server CPU per step click, this tree against an earlier commit, in one run.

The earlier commit is checked out into a temporary git worktree (removed afterwards); each round runs the
protocol-level load test (benchmarks/load_test.py, a fresh server per run) of the old tree, then of this one,
so both see the same machine load. Printed: each run's JSON line, then one JSON line with the medians of
server CPU per verified click, their ratio, and the click p50/p95 medians.

    .venv/bin/python benchmarks/side_by_side.py --base d24fdc9 --rounds 3 --sessions 10 --steps 15
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_test(tree: Path, sessions: int, steps: int, interval: float) -> dict:
    """One run of `tree`'s own load test (its server runs `tree`'s app); its summary and details merged."""
    out = subprocess.run([sys.executable, str(tree / "benchmarks" / "load_test.py"), "--sessions", str(sessions),
                          "--steps", str(steps), "--interval", str(interval)], cwd=tree, capture_output=True,
                         text=True, check=True).stdout.strip().splitlines()
    return {**json.loads(out[-2]), **json.loads(out[-1])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", required=True, help="the earlier commit to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--steps", type=int, default=15)
    parser.add_argument("--interval", type=float, default=2.0)
    args = parser.parse_args()
    base = subprocess.run(["git", "rev-parse", "--short", args.base], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()
    runs: dict[str, list[dict]] = {"base": [], "this": []}
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), base], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            for r in range(args.rounds):
                for name, tree in (("base", old), ("this", ROOT)):
                    run = load_test(tree, args.sessions, args.steps, args.interval)
                    runs[name].append(run)
                    print(json.dumps({"round": r + 1, "tree": name, **run}), flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, check=False)

    def med(name: str, key: str) -> float:
        return statistics.median(x[key] for x in runs[name])

    cpu_base, cpu_this = med("base", "cpu_ms_per_click"), med("this", "cpu_ms_per_click")
    print(json.dumps({"base": base, "rounds": args.rounds, "sessions": args.sessions, "steps": args.steps,
                      "cpu_ms_per_click_base": cpu_base, "cpu_ms_per_click_this": cpu_this,
                      "ratio": round(cpu_this / cpu_base, 2),
                      "p50_ms_base": med("base", "p50_ms"), "p50_ms_this": med("this", "p50_ms"),
                      "p95_ms_base": med("base", "p95_ms"), "p95_ms_this": med("this", "p95_ms"),
                      "errors": sum(x["errors"] for v in runs.values() for x in v)}))


if __name__ == "__main__":
    main()
