"""How long does ranking every cross-attention head as a word timer take, and how much memory, for 300 clips of
5 s at whisper-tiny's dimensions (4 decoder layers x 6 heads, 1,500 encoder positions of 20 ms)?

    .venv/bin/python -m benchmarks.timing_rank                 # 300 clips of 5 s
    /usr/bin/time -v .venv/bin/python -m benchmarks.timing_rank   # and the peak resident memory
    .venv/bin/python -m benchmarks.timing_rank --quick         # 20 clips (a check that it runs)

It reports wall seconds and the process's CPU seconds (on a machine shared with other work the wall time
stretches; the CPU time does not). What it times is the ranking of model.analysis.timing (the stage
`align --audio-data` runs after the model's teacher-forced passes): every head normalised and median-filtered,
the greedy head-set choice on the first half, then every head, the mean of heads and the chosen set scored by
DTW on the second half, and the report. The
cross-attention is synthetic, seeded, of the shape a 5 s clip gives (its 250 frames; 2.5 words a second, one or
two tokens a word): three heads follow the words (each token row looks at its word's span), the others are
noise. Its accuracy figures are not the model's; the time and memory are the ranking's. The model's passes are
not in it (whisper-tiny's encoder alone reads its 30 s window in about 2 s per clip on this machine's CPU).
"""

from __future__ import annotations

import argparse
import json
import resource
import time

import numpy as np
from attention_lens.model.analysis.timing.gold import ClipGold, GoldWord
from attention_lens.model.analysis.timing.rank import ClipAttention, Ranking, choose_heads
from attention_lens.model.analysis.timing.report import report
from attention_lens.model.analysis.timing.words import TokenWord

LAYERS, HEADS, FRAME_S = 4, 6, 0.02
ALIGNED = ((2, 3), (3, 1), (2, 0))


def synthetic_clip(index: int, seconds: float) -> ClipAttention:
    """One seeded clip: gold words at 2.5 a second, their tokens, and cross-attention of whisper-tiny's shape."""
    rng = np.random.default_rng(index)
    frames = int(round(seconds / FRAME_S))
    n_words = max(2, int(round(seconds * 2.5 * rng.uniform(0.8, 1.2))))
    cuts = np.sort(rng.uniform(0.1, seconds - 0.1, 2 * n_words))
    starts, ends = cuts[0::2], cuts[1::2]
    gold = ClipGold(tuple(GoldWord(f"w{k}", float(s), float(e), f"synthetic {index}")
                          for k, (s, e) in enumerate(zip(starts, ends, strict=True))), f"synthetic {index}")
    words, token_word = [], []
    for k in range(n_words):
        pieces = int(rng.integers(1, 3))
        words.append(TokenWord(f"w{k}", f"w{k}", len(token_word), len(token_word) + pieces - 1))
        token_word += [k] * pieces
    rows = len(token_word)  # the rows reading tokens 1..R (the end token is read by none)
    cross = rng.dirichlet(np.full(frames, 0.5), size=(LAYERS, HEADS, rows)).astype(np.float32)
    span = np.zeros((rows, frames), dtype=np.float32)
    for r, k in enumerate(token_word):
        lo, hi = int(starts[k] / FRAME_S), max(int(ends[k] / FRAME_S), int(starts[k] / FRAME_S) + 1)
        span[r, lo:hi] = 1.0 / (hi - lo)
    for layer, head in ALIGNED:
        cross[layer, head] = 0.3 * cross[layer, head] + 0.7 * span
    return ClipAttention(index, f"clip{index:04d}", cross, tuple(words), gold, seconds, (1,) * n_words, FRAME_S)


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--clips", type=int, default=300)
    p.add_argument("--seconds", type=float, default=5.0)
    p.add_argument("--batch", type=int, default=16, help="clips per batched DTW when reporting")
    p.add_argument("--quick", action="store_true", help="20 clips")
    args = p.parse_args(argv)
    n = 20 if args.quick else args.clips
    half = n // 2
    made = 0.0
    t0 = time.perf_counter()
    selection = [synthetic_clip(k, args.seconds) for k in range(half)]
    made += time.perf_counter() - t0
    t1, c1 = time.perf_counter(), time.process_time()
    chosen, steps = choose_heads(selection, LAYERS, HEADS)
    choose_s, cpu = time.perf_counter() - t1, time.process_time() - c1
    del selection
    ranking = Ranking(LAYERS, HEADS, tuple(chosen))
    score_s = 0.0
    for k in range(half, n, args.batch):
        t = time.perf_counter()
        batch = [synthetic_clip(j, args.seconds) for j in range(k, min(k + args.batch, n))]
        made += time.perf_counter() - t
        t, c = time.perf_counter(), time.process_time()
        ranking.add(batch)
        score_s, cpu = score_s + time.perf_counter() - t, cpu + time.process_time() - c
    t, c = time.perf_counter(), time.process_time()
    out = report(ranking, {"source": "first half", "chosen_on": half, "steps": steps}, {"model": "synthetic"})
    json.dumps(out)
    report_s, cpu = time.perf_counter() - t, cpu + time.process_time() - c
    figures = {"clips": n, "seconds": args.seconds, "layers": LAYERS, "heads": HEADS,
               "rank_s": round(choose_s + score_s + report_s, 2), "rank_cpu_s": round(cpu, 2),
               "choose_s": round(choose_s, 2),
               "score_s": round(score_s, 2), "report_s": round(report_s, 2), "synthesis_s": round(made, 2),
               "total_s": round(time.perf_counter() - t0, 2),
               "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
               "chosen": [list(h) for h in chosen], "aligned_heads": [list(h) for h in ALIGNED],
               "reported_median_ms": out["median_start_error_ms"], "reported_within_100ms": out["within_100ms"]}
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
