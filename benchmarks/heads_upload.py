"""The Heads page's "Your file" in the app's own path (app.services, as the page calls it), old against new in one
run: wall time, CPU time and peak memory to rank every head and measure its role over an upload of N lines.

    .venv/bin/python -m benchmarks.heads_upload --lines 500 5000
    .venv/bin/python -m benchmarks.heads_upload --lines 500 --sides new       # one side only
    .venv/bin/python -m benchmarks.heads_upload --quick                       # 20 lines, new only

- new (this checkout): services.check_upload (the file read line by line) and services.upload_head_ranking (every
  pair in length-bucketed batches of 16, ranking and roles added up per head).
- old (`--old REV`, a commit before the page streamed, e.g. 0e0e055): alignment.parse_tsv over the decoded text
  (at most 5,000 lines), services.head_ranking_on (rank_heads on every pair at once, batches of 32) and
  services.head_roles_on (head_roles over every pair), as the page called them. Its app/, model/ and
  attention_lens/ come from `git archive` and are put first on PYTHONPATH.

The file: the shipped everyday en-fr model's own test split (`train --data`'s held-out pairs), repeated and cut to
each line count. Each (side, lines) runs in a fresh process with torch on one thread; its peak memory is that
process's ru_maxrss, also given less the resident size after the model was loaded (what the upload's ranking
adds). The sides alternate (old, new, then new, old at the next size). Old and new must rank the heads alike:
the largest difference of a head's loss increase is printed. The last line is one JSON object.
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
MODEL = "everyday-en-fr"

CHILD = r"""
import json, os, resource, sys, time
import torch
torch.set_num_threads(1)
side, data_path, key = sys.argv[1], sys.argv[2], sys.argv[3]
from attention_lens.app import services

def rss():
    with open("/proc/self/status") as f:
        return next(int(row.split()[1]) * 1024 for row in f if row.startswith("VmRSS:"))

services.get_engine(key)
loaded = rss()
data = open(data_path, "rb").read()
t, cpu = time.perf_counter(), time.process_time()
if side == "new":
    checked = services.check_upload(data)
    assert not checked.problems, checked.problems
    result = services.upload_head_ranking(key, data, checked)
    ranking, roles = result["ranking"], result["roles"]
else:
    examples, problems = services.alignment.parse_tsv(data.decode("utf-8"))
    assert not problems, problems[:3]
    ranking = services.head_ranking_on(key, tuple((e.source, e.target) for e in examples))
    roles = services.head_roles_on(key, tuple((e.source, e.target, e.gold) for e in examples))
seconds, cpu = time.perf_counter() - t, time.process_time() - cpu
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
print(json.dumps({"seconds": seconds, "cpu": cpu, "peak": peak, "loaded": loaded, "n": ranking["n"],
                  "roles_n": roles["n"],
                  "heads": {f"{h['kind']}:{h['layer']}:{h['head']}": h["loss_increase"] for h in ranking["heads"]}}))
"""


def old_path(commit: str, where: Path) -> Path:
    """A folder to put first on PYTHONPATH so that `attention_lens` is `commit`'s (its app/, model/ and package)."""
    tree, pkg = where / "tree", where / "pkg" / "attention_lens"
    tree.mkdir(parents=True)
    archive = subprocess.run(["git", "archive", commit, "app", "model", "attention_lens"], cwd=ROOT,
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    (tree / "checkpoints").symlink_to(ROOT / "checkpoints")  # the registry finds the shipped models beside app/
    pkg.mkdir(parents=True)
    for f in (tree / "attention_lens").glob("*.py"):
        shutil.copy(f, pkg / f.name)
    for name in ("app", "model"):
        (pkg / name).symlink_to(tree / name)
    return where / "pkg"


def test_pairs(model: str) -> list[tuple[str, str]]:
    """The everyday model's own test split (the pairs the Heads page's "Test split" reads)."""
    from attention_lens.model.corpora.grouped_split import held_out_split

    card = json.loads((ROOT / "checkpoints" / model / "card.json").read_text())
    return held_out_split(card["data"], int(card.get("seed", 0)))["test"]


def write_file(pairs: list[tuple[str, str]], lines: int, path: Path) -> None:
    with open(path, "w", encoding="utf-8") as f:
        for i in range(lines):
            s, t = pairs[i % len(pairs)]
            f.write(f"{s}\t{t}\n")


def run_side(side: str, data: Path, model: str, pythonpath: Path | None) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["OMP_NUM_THREADS"] = "1"
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    # the old side runs outside this checkout, whose top-level attention_lens/ would be imported first
    proc = subprocess.run([sys.executable, "-c", CHILD, side, str(data), model],
                          cwd=ROOT if pythonpath is None else pythonpath, env=env,
                          capture_output=True, text=True)
    if proc.returncode:
        raise SystemExit(f"{side} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--lines", type=int, nargs="+", default=[500, 5000])
    p.add_argument("--sides", nargs="+", choices=("old", "new"), default=["old", "new"])
    p.add_argument("--old", metavar="REV", help="a git revision to compare with (e.g. the commit "
                    "before the change); without it, this tree alone")
    p.add_argument("--model", default=MODEL, help=f"a shipped everyday model (default {MODEL})")
    p.add_argument("--quick", action="store_true", help="20 lines, the new side only")
    args = p.parse_args(argv)
    if args.quick:
        args.lines, args.sides = [20], ["new"]
    args.sides = [s for s in args.sides if s == "new" or args.old]
    pairs = test_pairs(args.model)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        old = old_path(args.old, where / "old") if "old" in args.sides else None
        for k, lines in enumerate(args.lines):
            data = where / f"{lines}.tsv"
            write_file(pairs, lines, data)
            order = args.sides if k % 2 == 0 else list(reversed(args.sides))
            got = {side: run_side(side, data, args.model, old if side == "old" else None) for side in order}
            row = {"lines": lines, "bytes": data.stat().st_size}
            for side, r in got.items():
                row[side] = {"seconds": round(r["seconds"], 1), "cpu": round(r["cpu"], 1),
                             "peak_mb": round(r["peak"] / 2**20, 1),
                             "over_loaded_mb": round((r["peak"] - r["loaded"]) / 2**20, 1), "n": r["n"]}
            if len(got) == 2:
                a, b = got["old"]["heads"], got["new"]["heads"]
                row["largest_difference"] = max(abs(a[h] - b[h]) for h in a)
                row["same_order"] = sorted(a, key=lambda h: -a[h]) == sorted(b, key=lambda h: -b[h])
            rows.append(row)
            print(" · ".join(f"{side}: {row[side]['seconds']} s wall, {row[side]['cpu']} s CPU, peak "
                             f"{row[side]['peak_mb']} MB (+{row[side]['over_loaded_mb']} MB over the loaded model)"
                             for side in got) + f"  [{lines:,} lines, {row['bytes']:,} bytes]", flush=True)
    print(json.dumps({"model": args.model, "old": args.old if "old" in args.sides else None, "rows": rows}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
