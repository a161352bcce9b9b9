"""`eval --model M --audio-data LIST.tsv [--json]`: the word error rate of a speech model's greedy transcripts of a
list of clips (model.audio.clips: `clip path<TAB>transcript`, paths relative to the list).

WER = word edits (substitutions, deletions, insertions) / reference words over the whole list, computed by jiwer
after lowercasing and removing punctuation (model.speech.scoring.normalise: the one normaliser of the speech
figures). Clips are decoded through the engine in batches (the one decoding loop, attention not recorded), with
the run's language and task (--language, --task). A clip that cannot be read is reported by its line number on
stderr and left out of the figures (`failed` counts them; the exit code is then 1).
"""

from __future__ import annotations

import argparse
import json
import sys

BATCH = 16  # clips encoded and decoded together when --batch-size is not given


def clip_errors(reference: str, hypothesis: str) -> tuple[int, int]:
    """(word edits, reference words) of one clip after normalising both sides."""
    import jiwer
    from attention_lens.model.speech.scoring import normalise

    ref, hyp = normalise(reference), normalise(hypothesis)
    if not hyp:  # jiwer needs words on both sides: an empty transcript deletes every reference word
        return len(ref.split()), len(ref.split())
    out = jiwer.process_words(ref, hyp)
    return out.substitutions + out.deletions + out.insertions, len(ref.split())


def run_audio(args: argparse.Namespace) -> int:
    from attention_lens.model.audio.clips import read_clip_list
    from attention_lens.model.cli.common import open_model
    from attention_lens.model.engine import DecodeOptions, ModelInputError
    from attention_lens.model.speech.scoring import normalise
    from tqdm import tqdm

    engine = open_model(args)
    if engine.source_kind != "audio":
        raise ModelInputError(f"--audio-data: {engine.name} is a {engine.family} text model; a clip list is "
                              f"scored by a speech model (e.g. a Whisper folder). Give it --data FILE.tsv.")
    options = DecodeOptions(language=args.language, task=args.task)
    size = args.batch_size or BATCH
    if size < 1:
        raise ValueError("--batch-size must be at least 1")
    lines = read_clip_list(args.audio_data, need_transcript=True)
    rows: list[dict] = []
    used: dict[str, str | None] = {"language": options.language, "task": options.task}
    failed = 0
    bar = tqdm(total=len(lines), desc="evaluating", unit="clip", file=sys.stderr, disable=True if args.json else None)
    batch: list[tuple] = []

    def flush() -> None:
        runs = engine.decode_batch([src for _, src in batch], options, need_weights=False)
        for (line, _), run in zip(batch, runs):
            hypothesis = engine.detokenize(run.out_ids)
            errors, words = clip_errors(line.transcript, hypothesis)
            rows.append({"line": line.number, "clip": line.written, "reference": line.transcript,
                         "hypothesis": hypothesis, "errors": errors, "words": words})
        bar.update(len(batch))
        batch.clear()

    for line in lines:
        try:
            if line.error:
                raise ModelInputError(line.error)
            if not normalise(line.transcript):
                raise ModelInputError("the transcript has no words once punctuation is removed")
            src, _, record, _ = engine.audio_source(line.path, options)
            used.update(language=record["language"], task=record["task"])
            batch.append((line, src))
        except ModelInputError as exc:
            failed += 1
            bar.update(1)
            tqdm.write(f"line {line.number}: error: {exc}", file=sys.stderr)
            continue
        if len(batch) == size:
            flush()
    if batch:
        flush()
    bar.close()
    if not rows:
        raise ValueError(f"{args.audio_data}: no clip could be scored ({failed} failed)")
    words = sum(r["words"] for r in rows)
    errors = sum(r["errors"] for r in rows)
    result = {"wer": errors / words, "n": len(rows), "words": words, "errors": errors, "failed": failed,
              **used, "clips": rows}
    if args.json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for key in ("wer", "n", "words", "errors", "failed"):
            value = result[key]
            print(f"{key:10s} {value:.4f}" if isinstance(value, float) else f"{key:10s} {value}")
    return 1 if failed else 0
