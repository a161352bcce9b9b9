"""`align` over a whole test set, old against new in one run: wall time, CPU time and peak memory (the
process's maximum resident set, as /usr/bin/time -v reports it) at a small and a large number of lines.

    .venv/bin/python -m benchmarks.align_stream            # 500 and 15,240 lines
    .venv/bin/python -m benchmarks.align_stream --lines 500 5000 50000 --sides new       # any sizes, one side
    .venv/bin/python -m benchmarks.align_stream --quick                                  # 20 and 60 lines

The data: the first 508 sentence pairs of assets/data/de-en.test.tsv (gold-aligned), its first 500 lines for
the small run, and those 508 lines repeated 30 times (15,240 lines) for the large one (--lines: the 508
lines repeated and cut to each count given). The model: the shipped
everyday de-en. `old` is another commit's model/ and attention_lens/ (`git archive`, default: the last commit
before align streamed), imported in place of this checkout's through PYTHONPATH; `new` is this checkout. The
runs alternate old, new, new, old so that a change in the machine's load hits both alike. Prints a table and,
last, one JSON line.
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

from harness.server import ROOT

MODEL = ROOT / "checkpoints" / "everyday-de-en"
DATA = ROOT / "assets" / "data" / "de-en.test.tsv"


def torch_threads() -> int:
    """torch's default intra-op thread count on this machine (what `old`, which has no --threads, runs with)."""
    import torch

    return torch.get_num_threads()


def old_tree(commit: str, where: Path) -> Path:
    """A folder to put first on PYTHONPATH so that `attention_lens` is `commit`'s (its model/ and package)."""
    tree, pkg = where / "tree", where / "pkg" / "attention_lens"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit, "model", "attention_lens"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    pkg.mkdir(parents=True)
    for f in (tree / "attention_lens").glob("*.py"):
        shutil.copy(f, pkg / f.name)
    (pkg / "model").symlink_to(tree / "model")
    return where / "pkg"


def run_align(data: Path, method: str, pythonpath: Path | None, cwd: Path, extra: tuple[str, ...] = ()) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    out = cwd / "out.json"
    cmd = ["/usr/bin/time", "-f", "%e %U %S %M", sys.executable, "-m", "attention_lens.model", "align", "--model",
           str(MODEL), "--data", str(data), "--method", method, "--json", "--quiet", *extra]
    with open(out, "w") as f:
        proc = subprocess.run(cmd, cwd=cwd, env=env, stdout=f, stderr=subprocess.PIPE, text=True)
    if proc.returncode:
        raise SystemExit(proc.stderr[-2000:])
    wall, user, system, rss_kb = proc.stderr.strip().splitlines()[-1].split()
    summary = json.loads(out.read_text())
    return {"wall_s": float(wall), "cpu_s": float(user) + float(system), "peak_mb": int(rss_kb) / 1024,
            "aer": summary["aer"], "n_scored": summary["n_scored"]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", metavar="REV", help="a git revision to compare with (e.g. the commit "
                    "before the change); without it, this tree alone")
    ap.add_argument("--method", default="union-plain-mean", help="align's --method (default %(default)s)")
    ap.add_argument("--small", type=int, default=500, help="lines of the small run")
    ap.add_argument("--repeat", type=int, default=30, help="the large run: 508 lines repeated this many times")
    ap.add_argument("--lines", type=int, nargs="+", help="instead of --small / --repeat: these line counts, each "
                                                          "the 508 lines repeated (and cut) to that many")
    ap.add_argument("--sides", nargs="+", default=["old", "new"], choices=["old", "new"],
                    help="which code to run (default: both, alternating)")
    ap.add_argument("--quick", action="store_true", help="20 lines and 60 lines (a check that it runs)")
    ap.add_argument("--threads", type=int, default=torch_threads(),
                    help="new's --threads (default: torch's own default here, %(default)s, which old always used; "
                         "new otherwise picks fewer on a busy machine and the two would not use the same cores)")
    args = ap.parse_args(argv)
    args.sides = [s for s in args.sides if s == "new" or args.old]
    base_n = 20 if args.quick else 508
    lines = DATA.read_text(encoding="utf-8").splitlines()[:base_n]
    sizes = ([20, 60] if args.quick else args.lines) or [args.small, base_n * args.repeat]
    with tempfile.TemporaryDirectory(prefix="align_stream_") as tmp:
        tmp = Path(tmp)
        old = old_tree(args.old, tmp / "old") if "old" in args.sides else None
        results: dict[str, dict[int, dict]] = {side: {} for side in args.sides}
        for k, n in enumerate(sizes):
            data = tmp / f"lines{n}.tsv"
            data.write_text("\n".join(lines[i % base_n] for i in range(n)) + "\n", encoding="utf-8")
            for side in (args.sides if k % 2 == 0 else args.sides[::-1]):  # old, new, new, old, ...
                results[side][n] = run_align(data, args.method, old if side == "old" else None, tmp,
                                             () if side == "old" else ("--threads", str(args.threads)))
                r = results[side][n]
                print(f"{side:4s} {n:6d} lines: {r['wall_s']:7.1f} s wall, {r['cpu_s']:7.1f} s CPU, peak "
                      f"{r['peak_mb']:6.0f} MB, AER {r['aer']:.4f} on {r['n_scored']}", flush=True)
            data.unlink()
    small, large = min(sizes), max(sizes)
    out: dict = {"method": args.method, "old": args.old, "lines": sizes, "new_threads": args.threads,
                 **{f"{side}_{n}": results[side][n] for side in results for n in sizes}}
    if "old" in results and "new" in results:
        out["speedup_wall_large"] = results["old"][large]["wall_s"] / results["new"][large]["wall_s"]
        out["speedup_cpu_large"] = results["old"][large]["cpu_s"] / results["new"][large]["cpu_s"]
    if "new" in results:
        out["new_peak_growth"] = results["new"][large]["peak_mb"] / results["new"][small]["peak_mb"] - 1
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
