"""The benchmark suite: every benchmark in benchmarks/ in one run, its measured figures written to RESULTS.md.

    .venv/bin/python -m benchmarks.run_all                    # the full run (long: load tests, page loads)
    .venv/bin/python -m benchmarks.run_all --only engine_speed app_latency payload --out r.md
    .venv/bin/python -m benchmarks.run_all --quick --out r.md   # every benchmark at tiny sizes (a test)

Parts 1-5 (the engine, a step click, bytes to the browser) run in this process and are written as tables of
medians and ratios. Every other benchmark runs as `python -m benchmarks.NAME` with its own arguments (`--quick`,
or the smallest arguments it has), and its table row holds the time it took and the last line it printed (its
figures, as JSON where the benchmark prints JSON). Quick mode checks that everything runs: its numbers mean
nothing, and it never writes the committed RESULTS.md.

torch runs on one thread (`torch.set_num_threads(1)`): on a shared 2-core machine two intra-op threads fight the
other processes and are many times slower, and one thread is what the app's server uses per session anyway. The
compared sides alternate inside every round, so load hits both alike; medians and ratios of medians are reported.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import torch

from benchmarks import app_latency, payload
from benchmarks import engine_speed as es
from harness.browser import CHROMIUM
from harness.server import ROOT, app_env, served

SERVER_TARGET_S, BROWSER_TARGET_S, PAYLOAD_TARGET = 0.100, 0.500, 20e6
RESULTS = ROOT / "benchmarks" / "RESULTS.md"
KEEP = "<!-- run_all.py keeps everything below: sections measured by other scripts -->"


@dataclass(frozen=True)
class Benchmark:
    """One benchmark: its module (benchmarks/NAME.py), the question it answers, and its arguments in a quick and
    a full run. `server`: the script drives a running app, so run_all serves one and passes `--port`; `files`:
    it writes pictures into `--out`, which run_all points at a temporary folder."""

    name: str
    question: str
    quick: tuple[str, ...] = ("--quick",)
    full: tuple[str, ...] = ()
    server: bool = False
    files: bool = False


TABLED = (
    Benchmark("engine_speed", "How fast does our engine step through a sentence while recording every attention "
              "weight: KV cache against recomputing, capture against the fused kernel, against Hugging Face?"),
    Benchmark("app_latency", "How long does a step click take, on the server and until Chromium has drawn it?"),
    Benchmark("payload", "How many bytes reach the browser for one full trace, against a bertviz-style payload?"),
)
SUITE = (
    Benchmark("big_models", "Do models of the size people use (opus-mt, t5-small) load and step fast enough?"),
    Benchmark("contrib_speed", "What do contributions cost over a plain traced decode?"),
    Benchmark("why_cost", "What do the logit lens and gradient saliency cost over a plain traced step?",
              quick=("--rounds", "1", "--models", "en-fr")),
    Benchmark("ig_quadrature", "How many points do integrated gradients need for completeness within 1%, by "
              "quadrature rule (trapezoid, Gauss-Legendre, the adaptive scheme in use)?",
              quick=("--models", "en-fr", "--sentences", "1")),
    Benchmark("hf_overhead", "What does the Hugging Face engine's traced step-through cost over its own generate?"),
    Benchmark("align_stream", "Does align's memory stay flat from 500 to 15,240 lines, and how much faster is it than "
              "before it streamed (old and new in one run)?"),
    Benchmark("align_upload_app", "How long does the Alignment page take to show the worst-first table and the "
              "breakdown of a 5,000-line file, and after another head is chosen (old and new in one run, Chromium); "
              "how much memory does an upload take at 500, 5,000 and the size cap's lines?"),
    Benchmark("stepper_bench", "How many bytes is a whole run in the browser's stepper, and what does a step cost "
              "there against a server run per step (click to row, a held key, server CPU, a burst of pages)?",
              quick=("--bytes-only",)),
    Benchmark("stepper_frames", "What does the frame after one step of Explore's stepper cost the browser: paint "
              "events, layout, DOM changes, frame time and a held key's steps a second (two versions of the "
              "stepper's files, on a plain page, in one run)?",
              quick=("--new", ".", "--views", "grid", "--steps", "2", "--no-hold")),
    Benchmark("view_switch_bench", "What does a kind / view switch cost, and a step with the key-value cache, the "
              "logit lens or saliency open: frames sent, bytes received, server CPU (old and new in one run)?",
              quick=("--new", ".", "--steps", "1", "--panels", "kv_cache,logit_lens"), full=("--new", ".")),
    Benchmark("compare_step_bench", "What does a step of Compare's shared step bar cost when both sides and their "
              "difference step in the browser, against a server run per step (key to both rows drawn, frames sent, "
              "server CPU; old and new in one run)?",
              quick=("--new", ".", "--steps", "1")),
    Benchmark("timing_rank", "How long and how much memory does ranking every head of a whisper-tiny-sized model as "
              "a word timer take for 300 clips of 5 s (DTW for every head, the greedy head set, the report)?"),
    Benchmark("speech_trace", "What does the trace of a clip cost on a speech model: the shipped spoken-grammar, "
              "whisper-tiny's and whisper-small's dimensions (CPU seconds, peak memory)?"),
    Benchmark("speech_page", "How many bytes does a clip's run send to the browser, and how long until Explore draws "
              "its first picture, beside a text model on the same server?"),
    Benchmark("heads_upload", "How long does the Heads page take to rank every head over an uploaded file of 500 and "
              "5,000 lines, and how much memory does it take (the app's path; old and new in one run)?"),
    Benchmark("hf_heads_speed", "How much faster is a Hugging Face model's Heads ranking with many heads off per pass "
              "(a head mask per batch row) than with one pass per head, on the same pairs (one run)?",
              quick=("--quick", "--pairs", "2", "--words", "4")),
    Benchmark("corpus_memory", "Does the peak memory of eval, heads and trace --data stay flat as the file grows?",
              quick=("--lines", "20", "--commands", "eval")),
    Benchmark("dtype_attention", "How far do float16 and bfloat16 move the attention weights from float32?",
              quick=("--quick",)),
    Benchmark("export_speed", "How long does a PNG or SVG export of a view take?"),
    Benchmark("page_times", "How long does a student wait for Explore, Broken models and Alignment to draw?"),
    Benchmark("first_costs", "What does a fresh server's first export, head switch and Leakage lab cost, with "
              "and without the warm-up?", quick=("--rounds", "1", "--idle", "1")),
    Benchmark("load_test", "What does a class feel like on one server: all clicking Next at once, and at random "
              "times (Streamlit's protocol, Chromium pages beside)?",
              full=("--sessions", "28", "--browsers", "2", "--rounds", "10", "--seconds", "60", "--think", "4")),
    Benchmark("browser_load_test", "What does one real page feel like while other Chromium pages step?",
              quick=("--sessions", "2", "--steps", "2")),
    Benchmark("burst_bench", "What does a Chromium page's step take while the class steps at the same instant, "
              "each protocol session sending what a real page's step sends (nothing, for the stepper), and how many "
              "Chromium pages can this machine drive (old and new in one run)?",
              quick=("--new", ".", "--sessions", "2", "--pages", "1", "--rounds", "2", "--gap", "0.2"),
              full=("--new", ".", "--sessions", "29,199,0", "--pages", "1,1,30", "--rounds", "10")),
    Benchmark("train_speed", "How fast do the candidate everyday-model sizes train on real batches?",
              quick=("--quick", "--threads", "1")),
    Benchmark("lessons_figures", "The README's figures for the cache and bug lessons on the shipped en-fr.",
              quick=()),
    Benchmark("timing_screenshot", "Screenshots of the speech model's head ranking and DTW view at 1366 x 768 (not "
              "timed).", quick=("--clips", "4"), server=True, files=True),
    Benchmark("lessons_screenshots", "Screenshots of the cache and bug views at 1366 x 768 (not timed).",
              quick=(), server=True, files=True),
    Benchmark("why_screenshots", "Screenshots of the logit lens, saliency, Compare and head-role views at 1366 x 768 "
              "(not timed).", quick=("--only", "heads"), server=True, files=True),
)
EVERY = TABLED + SUITE


def machine() -> list[str]:
    cpu = "unknown"
    with contextlib.suppress(OSError, StopIteration):
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    import plotly
    import streamlit
    import transformers

    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    training = 0
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        with contextlib.suppress(OSError):
            training += b"model\x00train" in cmdline.read_bytes()
    if training:
        load += f"; {training} model-training processes were running during this run (shared machine)"
    return [f"- date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')} (local)",
            f"- CPU: {cpu}, {os.cpu_count()} cores; load average at start {load}",
            f"- Python {platform.python_version()}, torch {torch.__version__} ({torch.get_num_threads()} thread), "
            f"transformers {transformers.__version__}, streamlit {streamlit.__version__}, plotly {plotly.__version__}"]


def fmt_s(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def fmt_mb(b: float) -> str:
    return f"{b / 1e6:.2f} MB" if b >= 1e5 else f"{b / 1e3:.1f} kB"


def verdict(met: bool | None) -> str:
    return "" if met is None else ("met" if met else "**missed**")


def speed_table(rows: list[es.Row]) -> list[str]:
    out = ["| case | side A | median A | side B | median B | A / B (median of paired rounds) | target | |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.case} | {r.a_name} | {fmt_s(r.a_s)} | {r.b_name} | {fmt_s(r.b_s)} | {r.ratio:.2f} | "
                   f"{r.target} | {verdict(r.met)} |")
    return out


def part_engine(quick: bool, rounds: int) -> list[str]:
    results = es.run(quick, rounds)
    return ["## 1. Step-through: key-value cache against recomputing the prefix", "",
            "Greedy decoding of a random-weight model of the shipped grammar models' dimensions (d_model 128, "
            "4 heads, 3 + 3 layers, d_ff 512, 1000-piece vocabulary, max_positions 1024; one row also at 6 x 8 "
            "heads, d_model 512, d_ff 2048), 16 source tokens, the end token blocked so that every run writes "
            "exactly the target length. Both sides record every attention row; the recompute side runs the "
            "decoder over the whole prefix at every step (encoder once, as the cache side). Both give the same "
            "tokens and weights (checked).", "", *speed_table(results["cache"]), "",
            "## 2. Attention capture against the fused kernel", "",
            "`decode_batch(need_weights=True)` (our attention, weights returned and recorded) against "
            "`need_weights=False` (PyTorch `scaled_dot_product_attention`, nothing recorded).", "",
            *speed_table(results["capture"]), "",
            "## 3. Our engine against Hugging Face `generate`", "",
            "`decode_batch` (every weight, as numpy arrays) against `MarianMTModel.generate(output_attentions=True, "
            "return_dict_in_generate=True, num_beams=1, min_new_tokens=m, max_new_tokens=m)` with eager attention, "
            "a random Marian of the same dimensions and vocabulary, the same source ids, end and pad blocked.", "",
            *speed_table(results["hf"]), ""]


def part_app(quick: bool, tmp: Path, browser: bool) -> list[str]:
    if quick or not (ROOT / "checkpoints" / "en-fr" / "config.json").is_file():
        from harness.models.tiny import build_tiny_checkpoint

        dims = {} if quick else es.DEFAULT_DIMS
        folder = build_tiny_checkpoint(tmp / "en-fr-dims-random", **dims, max_positions=256)
        default_env = app_latency.model_env(str(folder))[0]
        default_name = "random weights, tiny" if quick else "random weights, en-fr dimensions (no checkpoints/en-fr)"
    else:
        default_env, default_name = app_latency.model_env(None)
    models = [(default_name, default_env, not quick)]
    if not quick:
        from harness.models.tiny import build_tiny_checkpoint

        big = build_tiny_checkpoint(tmp / "random-6x8", max_positions=1024, **es.LARGE_DIMS)
        models.append(("random 6 x 8, d_model 512", app_latency.model_env(str(big))[0], False))
    n_server, n_browser = (2, 2) if quick else (20, 10)
    lines = ["## 4. A step click", "",
             "One Next click in the default all-layers x heads grid of cross-attention, source "
             f"“{app_latency.SOURCE}”. Server: AppTest click to rerun done (script, fragment, figures; no browser), "
             f"median of {n_server}. Browser: Playwright click in Chromium until the new row is drawn, median of "
             f"{n_browser}.", "", "| model | server median | target | | click-to-render median | target | |",
             "|---|---|---|---|---|---|---|"]
    saved = dict(os.environ)
    for name, env, targeted in models:
        server = statistics.median(app_latency.server_clicks(env, n_server, "cross_attention"))
        os.environ.clear()
        os.environ.update(saved)
        shown = browser and Path(CHROMIUM).exists()
        clicked = statistics.median(app_latency.browser_clicks(env, n_browser)) if shown else None
        s_met = server <= SERVER_TARGET_S if targeted else None
        b_met = clicked <= BROWSER_TARGET_S if targeted and clicked is not None else None
        lines.append(f"| {name} | {fmt_s(server)} | {'<= 100 ms' if targeted else ''} | {verdict(s_met)} | "
                     f"{fmt_s(clicked) if clicked is not None else 'not run'} | {'<= 500 ms' if targeted else ''} | "
                     f"{verdict(b_met)} |")
    return [*lines, ""]


def part_payload(quick: bool, tmp: Path, browser: bool) -> list[str]:
    sizes = (8, 16) if quick else (64, 256, 512)
    layers, heads = (2, 4) if quick else (6, 8)
    rows = payload.measure(sizes, layers, heads)
    lines = ["## 5. Bytes sent to the browser for one full trace", "",
             f"{layers} layers x {heads} heads, n = m. bertviz-style: every weight of every kind as float lists in "
             "one JSON document (serialised here). Ours: the plotly figure JSON of the view on screen at the last "
             "step (all rows), per kind, in the default grid and in the one-head view; grids above "
             f"{payload.views.figures.IMAGE_CELLS:,} cells are drawn as PNG panels. Synthetic trace (softmax rows "
             "of random scores).", "",
             "| n = m | cells (3 kinds) | bertviz-style | bytes / cell | grid: cross | grid: decoder self | "
             "grid: encoder self | one head (largest kind) | all three grids | bertviz / ours | target |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        grids = [r[f"grid:{k}"] for k in ("cross_attention", "decoder_self_attention", "encoder_self_attention")]
        head = max(r[k] for k in r if k.startswith("head:"))
        on_screen = max(*grids, head)
        target = "" if quick else f"<= 20 MB on screen: {verdict(on_screen <= PAYLOAD_TARGET)}"
        lines.append(f"| {r['n']} | {r['cells']:,} | {fmt_mb(r['bertviz'])} | {r['bertviz'] / r['cells']:.1f} | "
                     f"{fmt_mb(grids[0])} | {fmt_mb(grids[1])} | {fmt_mb(grids[2])} | {fmt_mb(head)} | "
                     f"{fmt_mb(sum(grids))} | {r['bertviz'] / sum(grids):.1f}x | {target} |")
    if browser and Path(CHROMIUM).exists():
        big = max(sizes)
        dims = {} if quick else dict(es.LARGE_DIMS)
        folder = payload.blocked_eos_checkpoint(tmp / f"random-{big}", big, **dims)
        measured = payload.browser_bytes(folder, big, panels=layers * heads, timeout_s=120 if quick else 900)
        lines += ["", f"In Chromium (`streamlit run`, random {layers} x {heads} model with {big} positions, a long "
                  f"source truncated to n = {big}, m = {big} rows): websocket bytes received from the click until the "
                  "chart is drawn with its last row outlined.", "",
                  "| view | bytes received | click to drawn | target |", "|---|---|---|---|"]
        for view, label in (("cross_attention", "Run to end: grid of cross-attention"),
                            ("decoder_self_attention", "switch to decoder self-attention (grid)")):
            got = measured[view]
            met = "" if quick else f"<= 20 MB, renders: {verdict(got['bytes'] <= PAYLOAD_TARGET)}"
            lines.append(f"| {label} | {fmt_mb(got['bytes'])} | {fmt_s(got['seconds'])} | {met} |")
    return [*lines, ""]


def run_module(bench: Benchmark, quick: bool, tmp: Path) -> tuple[int, float, str]:
    """Run `python -m benchmarks.NAME` with the benchmark's arguments from the root: (exit code, seconds, its last
    line of output, or the end of its error output if it failed)."""
    args = list(bench.quick if quick else bench.full)
    if bench.files:
        args += ["--out", str(tmp)]
    t0 = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if bench.server:
            url, _ = stack.enter_context(served(app_env()))
            args += ["--port", url.rsplit(":", 1)[1]]
        proc = subprocess.run([sys.executable, "-m", f"benchmarks.{bench.name}", *args], cwd=ROOT, text=True,
                              capture_output=True)
    seconds = time.perf_counter() - t0
    if proc.returncode:
        return proc.returncode, seconds, proc.stderr.strip()[-1500:]
    lines = [line for line in proc.stdout.splitlines() if line.strip()]
    return 0, seconds, lines[-1] if lines else ""


def part_suite(benches: list[Benchmark], quick: bool, tmp: Path) -> tuple[list[str], int]:
    lines = ["## Every other benchmark, as it printed its figures", "",
             "Each run as `python -m benchmarks.NAME` with the arguments shown, one after another; the last line it "
             "printed (its figures), and how long it took.", "",
             "| benchmark | question | arguments | exit | seconds | last line printed |", "|---|---|---|---|---|---|"]
    failed = 0
    for bench in benches:
        code, seconds, last = run_module(bench, quick, tmp)
        failed += code != 0
        print(f"{bench.name}: exit {code} in {seconds:.0f} s", file=sys.stderr, flush=True)
        shown = last.replace("|", "\\|").replace("\n", " ⏎ ")
        args = " ".join(bench.quick if quick else bench.full)
        lines.append(f"| `{bench.name}` | {bench.question} | `{args}` | {code} | {seconds:.0f} | `{shown}` |")
    return [*lines, ""], failed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, one round: checks that every benchmark runs")
    ap.add_argument("--only", nargs="+", choices=[b.name for b in EVERY], metavar="NAME",
                    help="run these benchmarks only (needs --out: a partial run would replace RESULTS.md's parts)")
    ap.add_argument("--out", type=Path, default=RESULTS)
    ap.add_argument("--rounds", type=int, default=None, help="rounds per speed comparison (default 9, quick 1)")
    ap.add_argument("--no-browser", action="store_true", help="skip the Chromium measurements of parts 4 and 5")
    args = ap.parse_args(argv)
    if (args.quick or args.only) and args.out.resolve() == RESULTS.resolve():
        ap.error("a quick or partial run writes elsewhere: pass --out")
    chosen = set(args.only or [b.name for b in EVERY])
    torch.set_num_threads(1)
    rounds = args.rounds or (1 if args.quick else 9)
    browser = not args.no_browser
    started = time.perf_counter()
    head = ["# Benchmarks" + (" (quick mode: tiny sizes, numbers mean nothing)" if args.quick else ""), "",
            "Written by `python -m benchmarks.run_all" + (" --quick" if args.quick else "") + "`. Speeds are medians "
            f"over {rounds} interleaved rounds after a warm-up (half as many, at least 3, for the recompute side at "
            "256 tokens), the two sides back to back in every round, in alternating order; a ratio is the median of "
            "the per-round ratios, so load drift on the shared machine cancels. torch on 1 thread "
            "(`torch.set_num_threads(1)`); random weights in parts 1-5 (speed and payload do not depend on what the "
            "weights are).", "", *machine(), ""]
    body: list[str] = []
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        if "engine_speed" in chosen:
            body += part_engine(args.quick, rounds)
        if "app_latency" in chosen:
            body += part_app(args.quick, Path(tmp), browser)
        if "payload" in chosen:
            body += part_payload(args.quick, Path(tmp), browser)
        suite = [b for b in SUITE if b.name in chosen]
        if suite:
            lines, failed = part_suite(suite, args.quick, Path(tmp))
            body += lines
    text = "\n".join([*head, *body, f"Total time of this run: {time.perf_counter() - started:.0f} s.", ""])
    old = args.out.read_text(encoding="utf-8") if args.out.is_file() else ""
    if KEEP in old:  # sections written by hand from other runs stay
        text += "\n" + old[old.index(KEEP):]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}" + (f"; {failed} benchmark(s) failed" if failed else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
