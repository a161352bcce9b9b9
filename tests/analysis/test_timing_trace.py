"""Word timings read off an engine's Trace of a tiny Whisper folder equal transformers' own
`generate(..., return_token_timestamps=True)` for the same clip, tokens and alignment_heads (within one 20 ms
frame), and the generation config the tool writes loads in transformers and drives those timestamps."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile
import torch
from attention_lens.model.analysis.timing.config import write_generation_config
from attention_lens.model.analysis.timing.trace_times import trace_token_times, word_timings
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.options import DecodeOptions

from tests.fixtures.shaped_whisper import chirp, shaped_whisper_folder

HEADS = [(1, 0), (1, 2), (0, 3)]


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return shaped_whisper_folder(tmp_path_factory.mktemp("shaped") / "whisper", alignment_heads=HEADS)


def generate(folder, samples, heads=None, generation_config=None):
    """transformers alone: (sequence ids, token_timestamps) of a greedy run that repeats no token (so its rows
    differ), the special tokens but the end suppressed."""
    from transformers import GenerationConfig, WhisperForConditionalGeneration, WhisperProcessor

    model = WhisperForConditionalGeneration.from_pretrained(str(folder), attn_implementation="eager").eval()
    processor = WhisperProcessor.from_pretrained(str(folder))
    gen = generation_config or GenerationConfig.from_pretrained(str(folder))
    if heads is not None:
        gen.alignment_heads = [list(h) for h in heads]
    tok = processor.tokenizer
    gen.suppress_tokens = [i for i in range(len(tok)) if tok.convert_ids_to_tokens(i).startswith("<|")
                           and i != gen.eos_token_id]
    f = processor(samples, sampling_rate=16_000, return_tensors="pt", return_attention_mask=True)
    with torch.no_grad():
        out = model.generate(f["input_features"], attention_mask=f["attention_mask"], generation_config=gen,
                             return_token_timestamps=True, return_dict_in_generate=True, max_new_tokens=12,
                             no_repeat_ngram_size=1, language="en", task="transcribe")
    return out["sequences"][0].tolist(), out["token_timestamps"][0].numpy()


@pytest.mark.slow
@pytest.mark.parametrize("seconds,seed", [(2.5, 1), (4.0, 3)])
def test_trace_token_times_equal_transformers(folder, tmp_path, seconds, seed):
    samples = chirp(seconds, seed)
    path = tmp_path / "clip.wav"
    soundfile.write(path, samples, 16_000)
    ids, theirs = generate(folder, samples)
    prompt = 4  # <|startoftranscript|> <|en|> <|transcribe|> <|notimestamps|>
    assert np.isfinite(theirs).all() and len(set(np.round(theirs[prompt:], 2))) > 3  # defined and spread
    engine = load_engine(str(folder))
    # the engine's own incremental run, every token forced to generate's: the rows read the same tokens
    trace = engine.trace(audio=str(path), options=DecodeOptions(forced=tuple(ids[1:]), max_len=len(ids) - 1))
    assert [engine.piece_to_id(t) for t in trace.target_tokens] == ids[1:]
    tokens, ours = trace_token_times(trace, HEADS)
    assert len(tokens) == len(ids) - prompt
    assert np.abs(ours - theirs[prompt:]).max() <= 0.02 + 1e-6
    words = word_timings(trace, HEADS)
    assert words and all(w.start <= w.end for w in words)
    assert [w.start for w in words] == sorted(w.start for w in words)


@pytest.mark.slow
def test_generation_config_written_by_the_tool_drives_transformers_timestamps(folder, tmp_path):
    from transformers import GenerationConfig

    heads = [(0, 1), (1, 3)]
    out = tmp_path / "generation_config.json"
    written = write_generation_config(str(folder), heads, str(out))
    assert written["alignment_heads"] == [[0, 1], [1, 3]]
    loaded = GenerationConfig.from_pretrained(str(tmp_path))
    assert loaded.alignment_heads == [[0, 1], [1, 3]]
    original = json.loads((folder / "generation_config.json").read_text())
    assert {k: v for k, v in written.items() if k != "alignment_heads"} == \
        {k: v for k, v in original.items() if k != "alignment_heads"}
    samples = chirp(4.0, 3)
    ids_new, with_new = generate(folder, samples, generation_config=loaded)
    ids_old, with_old = generate(folder, samples, heads=HEADS)
    ids_same, with_same = generate(folder, samples, heads=heads)
    assert ids_new == ids_old == ids_same
    np.testing.assert_array_equal(with_new, with_same)  # generate used the written heads ...
    assert not np.array_equal(with_new, with_old)  # ... not the folder's own


@pytest.mark.slow
@pytest.mark.parametrize("line", [0, 1])
def test_shipped_speech_model_token_times_equal_transformers(line):
    """The same equality on the shipped speech model, with its own alignment_heads, on held-out test clips."""
    from transformers import WhisperForConditionalGeneration, WhisperProcessor

    from tests.fixtures.checkpoints import ROOT, shipped_checkpoint

    folder = shipped_checkpoint("spoken-grammar")
    test = ROOT / "assets" / "speech" / "test"
    path = test / (test / "list.tsv").read_text(encoding="utf-8").splitlines()[line].split("\t")[0]
    samples, rate = soundfile.read(path, dtype="float32")
    model = WhisperForConditionalGeneration.from_pretrained(str(folder), attn_implementation="eager").eval()
    processor = WhisperProcessor.from_pretrained(str(folder))
    heads = [tuple(h) for h in model.generation_config.alignment_heads]
    f = processor(samples, sampling_rate=rate, return_tensors="pt", return_attention_mask=True)
    with torch.no_grad():
        out = model.generate(f["input_features"], attention_mask=f["attention_mask"], return_token_timestamps=True,
                             return_dict_in_generate=True, language="en", task="transcribe")
    ids, theirs = out["sequences"][0].tolist(), out["token_timestamps"][0].numpy()
    engine = load_engine(str(folder))
    trace = engine.trace(audio=str(path), options=DecodeOptions(forced=tuple(ids[1:]), max_len=len(ids) - 1))
    tokens, ours = trace_token_times(trace, heads)
    prompt = len(ids) - len(tokens)
    assert prompt == 4 and np.isfinite(theirs).all()
    assert np.abs(ours - theirs[prompt:]).max() <= 0.02 + 1e-6


def test_predicting_rows_are_the_reading_rows_one_earlier(folder):
    """token_rows="predicting" times a token by the row whose output is that token, the row before the one that
    reads it; the same number of rows either way, and an unknown rule is refused in one line."""
    from attention_lens.model.analysis.timing.trace_times import trace_rows

    engine = load_engine(str(folder))
    trace = engine.trace(audio=(chirp(2.0), 16_000), options=DecodeOptions(max_len=6))
    reading, tokens = trace_rows(trace)
    predicting, same_tokens = trace_rows(trace, "predicting")
    assert tokens == same_tokens and predicting.shape == reading.shape
    assert np.array_equal(predicting[:, :, 1:], reading[:, :, :-1])
    with pytest.raises(ValueError, match="reading or predicting"):
        trace_rows(trace, "both")


@pytest.mark.slow
def test_the_shipped_model_times_its_words_closer_by_the_predicting_row(tmp_path):
    """On the shipped speech model the row that predicts a word looks at its sound: the same heads time the
    held-out clips' word starts much closer to the gold by that row than by transformers' reading row (whose
    words come out one word late)."""
    import attention_lens
    from tests.fixtures.checkpoints import ROOT

    test = ROOT / "assets" / "speech" / "test"
    lines = (test / "list.tsv").read_text(encoding="utf-8").splitlines()[:8]
    clips = tmp_path / "list.tsv"
    clips.write_text("".join(f"{test / line.split(chr(9))[0]}\t{line.split(chr(9))[1]}\n" for line in lines))
    ids = {line.split("\t")[0].rsplit("/", 1)[-1].removesuffix(".flac") for line in lines}
    gold = tmp_path / "timings.ctm"
    gold.write_text("".join(row + "\n" for row in (test / "timings.ctm").read_text(encoding="utf-8").splitlines()
                            if row.split(" ", 1)[0] in ids))
    model = attention_lens.load("spoken-grammar")
    heads = [(2, 0), (2, 2)]
    errors = {rows: model.rank_alignment_heads(clips, gold, alignment_heads=heads, token_rows=rows)
              for rows in ("reading", "predicting")}
    assert errors["predicting"]["merge"]["token_rows"] == "predicting"
    assert errors["predicting"]["median_start_error_ms"] < 60 < errors["reading"]["median_start_error_ms"]
    assert errors["predicting"]["within_100ms"] > errors["reading"]["within_100ms"] + 0.3
