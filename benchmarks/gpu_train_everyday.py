"""Train both healthy everyday models (en-fr, de-en, the Tatoeba pairs of assets/data/tatoeba) on one GPU, side by
side, in the few minutes a lent device machine gives, and bring them back in pieces.

On the device machine, from the repository root (the run tool sets $OUT; the issue's notes say how to keep
checkpoints/ out of what travels):

    python -m benchmarks.gpu_train_everyday --out "$OUT"                # preset gpu-minutes, 4 minutes each

Each pair runs `python -m model train --data assets/data/tatoeba/PAIR.tsv.gz --preset gpu-minutes --device cuda`
(4 + 4 layers x 8 heads, d_model 256, 12,000-token batches, bf16/fp16 autocast; the card records data, split,
steps, seconds, device, precision, tokens per second and the test-split metrics it measured), then
`python -m model eval --split test --json` on the saved float16 checkpoint. Into --out it writes at most 8
files, each at most 16 MiB, 64 MiB in all:

- `everyday-PAIR.tar.0`, `.1`, ...: the checkpoint folder (weights in float16, tokenizers, card.json,
  train_log.csv: the training curve) as one tar cut in 16 MiB pieces;
- `run.log`: the device (nvidia-smi), each process's stderr (steps, loss, tokens per second), each eval --json;
- `summary.json`: per pair the card's device, minutes, steps, tokens per second and test metrics.

Here, `benchmarks/gpu_join.sh FOLDER DEST` joins the pieces back into checkpoint folders.

Rehearsal on the CPU (a minute; tests/builtin/test_gpu_train_rehearsal.py runs it):

    python -m benchmarks.gpu_train_everyday --out rehearsal --preset cpu-rehearsal --device cpu --lines 3000
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAIRS = ("en-fr", "de-en")
PIECE = 16 * 1024 * 1024  # bytes per piece that comes back
MAX_FILES = 8
MAX_TOTAL = 64 * 1024 * 1024


def head_of(pair: str, lines: int, work: Path) -> Path:
    """The first `lines` pairs of the pair's Tatoeba file, written to work (a rehearsal's small data)."""
    out = work / f"{pair}.head{lines}.tsv"
    with gzip.open(ROOT / "assets" / "data" / "tatoeba" / f"{pair}.tsv.gz", "rt", encoding="utf-8") as f, \
            open(out, "w", encoding="utf-8") as g:
        for k, line in enumerate(f):
            if k >= lines:
                break
            g.write(line)
    return out


def pack(folder: Path, out: Path) -> list[Path]:
    """The folder as one tar in pieces of at most PIECE bytes: out/NAME.tar.0, .1, ..."""
    tar_path = out / f"{folder.name}.tar"
    with tarfile.open(tar_path, "w") as tar:
        tar.add(folder, arcname=folder.name)
    pieces = []
    with open(tar_path, "rb") as f:
        k = 0
        while block := f.read(PIECE):
            piece = out / f"{folder.name}.tar.{k}"
            piece.write_bytes(block)
            pieces.append(piece)
            k += 1
    tar_path.unlink()
    return pieces


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=os.environ.get("OUT"), help="where the pieces and logs go (default $OUT)")
    ap.add_argument("--preset", default="gpu-minutes", help="train --preset (gpu-minutes, or cpu-rehearsal)")
    ap.add_argument("--device", default="cuda", help="train --device (cuda; cpu for the rehearsal)")
    ap.add_argument("--minutes", type=float, help="train --time-budget per model (default: the preset's)")
    ap.add_argument("--lines", type=int, default=0, help="train on the first N pairs only (rehearsal; 0: all)")
    ap.add_argument("--sequential", action="store_true", help="one model after the other (default: side by side)")
    ap.add_argument("--work", default=str(Path(tempfile.gettempdir()) / "gpu_train_everyday"),
                    help="scratch folder for the checkpoints")
    args = ap.parse_args(argv)
    if not args.out:
        ap.error("give --out (or set $OUT)")
    out, work = Path(args.out), Path(args.work)
    out.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    log = [f"started {time.strftime('%Y-%m-%d %H:%M:%S %Z')}, preset {args.preset}, device {args.device}"]
    smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True) if args.device.startswith("cuda") else None
    log.append(smi.stdout if smi is not None and smi.returncode == 0 else "(no nvidia-smi)")
    procs = {}
    t0 = time.perf_counter()
    for pair in PAIRS:
        data = head_of(pair, args.lines, work) if args.lines else ROOT / "assets/data/tatoeba" / f"{pair}.tsv.gz"
        cmd = [sys.executable, "-m", "model", "train", "--data", str(data), "--preset", args.preset,
               "--device", args.device, "--out", str(work / f"everyday-{pair}"), "--quiet"]
        if args.minutes is not None:
            cmd += ["--time-budget", str(args.minutes)]
        log.append("$ " + " ".join(cmd))
        procs[pair] = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if args.sequential:
            procs[pair].wait()
    summary = {}
    failed = False
    for pair, proc in procs.items():
        text, _ = proc.communicate()
        log.append(f"---- train {pair}: exit {proc.returncode}\n{text}")
        folder = work / f"everyday-{pair}"
        if proc.returncode != 0:
            failed = True
            continue
        ev = subprocess.run([sys.executable, "-m", "model", "eval", "--model", str(folder), "--split", "test",
                             "--json", "--device", args.device], cwd=ROOT, capture_output=True, text=True)
        log.append(f"---- eval {pair} --split test: exit {ev.returncode}\n{ev.stdout}{ev.stderr[-2000:]}")
        card = json.loads((folder / "card.json").read_text())
        summary[pair] = {k: card.get(k) for k in ("data", "device", "precision", "steps", "train_seconds",
                                                  "tokens_per_second", "parameters", "test_pairs", "test_metrics")}
        summary[pair]["minutes"] = round(card["train_seconds"] / 60, 2)
        if ev.returncode == 0:
            summary[pair]["eval_test"] = {k: v for k, v in json.loads(ev.stdout).items() if k not in ("counts",
                                                                                                   "merge")}
        pack(folder, out)
    log.append(f"wall {time.perf_counter() - t0:.1f} s")
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    (out / "run.log").write_text("\n".join(log) + "\n")
    files = sorted(p for p in out.iterdir() if p.is_file())
    total = sum(p.stat().st_size for p in files)
    print(json.dumps({"files": [p.name for p in files], "bytes": total, "summary": summary}, indent=1))
    if len(files) > MAX_FILES or total > MAX_TOTAL or any(p.stat().st_size > PIECE for p in files):
        print(f"error: {len(files)} files, {total} bytes: over {MAX_FILES} files / {MAX_TOTAL} bytes / "
              f"{PIECE} bytes a file", file=sys.stderr)
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
