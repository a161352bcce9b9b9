"""Peak memory and time of the corpus commands (eval, heads, trace --data) at growing file sizes, the code of an
earlier commit (`--old`, run from a git worktree) beside this tree's, in one run.

    python -m benchmarks.corpus_memory --old 8dc84c4 --lines 500 5000 50000 --commands eval trace heads

Each (command, lines, version) runs in its own process; its peak resident memory is that process's
ru_maxrss (resource.getrusage of the child), its time the wall clock. The file is the shipped grammar en-fr
test split repeated to the line count (--model / --data to change). The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def old_tree(commit: str, where: Path) -> Path:
    """A worktree of `commit` and, beside it, a folder whose `attention_lens` package maps to that tree's model/
    and app/ (put first on PYTHONPATH, it wins over this tree's editable install)."""
    tree = where / "tree"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit], check=True,
                   capture_output=True)
    pkg = where / "path" / "attention_lens"
    shutil.copytree(tree / "attention_lens", pkg)
    for name in ("model", "app"):
        (pkg / name).symlink_to(tree / name)
    return tree


def command(name: str, model: str, data: Path, out: Path) -> list[str]:
    if name == "eval":
        return ["eval", "--model", model, "--data", str(data), "--json"]
    if name == "heads":
        return ["heads", "--model", model, "--data", str(data), "--json"]
    return ["trace", "--model", model, "--data", str(data), "--out", str(out)]


def peak_of(argv: list[str], cwd: Path, env: dict[str, str]) -> dict[str, float]:
    """Run in a fresh interpreter that reports its own child's ru_maxrss, so that each figure is one process's."""
    code = ("import json,resource,subprocess,sys,time;t=time.perf_counter();"
            "p=subprocess.run(sys.argv[1:],stdout=subprocess.DEVNULL,stderr=subprocess.PIPE,text=True);"
            "print(json.dumps({'rc':p.returncode,'seconds':round(time.perf_counter()-t,1),"
            "'peak_mb':round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss/1024,1),"
            "'err':p.stderr[-300:] if p.returncode not in (0,1) else ''}))")
    res = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "model", *argv], cwd=cwd, env=env,
                         capture_output=True, text=True)
    return json.loads(res.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", help="a commit whose code runs beside this tree's (omit: this tree only)")
    ap.add_argument("--lines", type=int, nargs="+", default=[500, 5000, 50000])
    ap.add_argument("--commands", nargs="+", default=["eval", "trace", "heads"], choices=["eval", "trace", "heads"])
    ap.add_argument("--model", default=str(ROOT / "checkpoints" / "en-fr"))
    ap.add_argument("--data", default=str(ROOT / "assets" / "data" / "en-fr.test.tsv"))
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="corpus_memory."))
    base = [line for line in Path(args.data).read_text(encoding="utf-8").splitlines() if line.strip()]
    versions = {"new": (ROOT, dict(os.environ))}
    if args.old:
        tree = old_tree(args.old, work / "old")
        env = dict(os.environ, PYTHONPATH=str(work / "old" / "path"))
        versions = {"old": (tree, env), **versions}
    rows = []
    try:
        for n in args.lines:
            data = work / f"lines{n}.tsv"
            data.write_text("\n".join(base[k % len(base)] for k in range(n)) + "\n", encoding="utf-8")
            for cmd in args.commands:
                for version, (cwd, env) in versions.items():
                    out = work / f"traces.{version}.{n}"
                    r = peak_of(command(cmd, args.model, data, out), cwd, env)
                    shutil.rmtree(out, ignore_errors=True)
                    row = {"command": cmd, "lines": n, "version": version, **r}
                    rows.append(row)
                    print(json.dumps(row), flush=True)
    finally:
        if args.old:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "old" / "tree")],
                           capture_output=True)
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps({"rows": rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
