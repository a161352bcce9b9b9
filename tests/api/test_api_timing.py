"""The API's word timings of a speech model: `Model.word_timings` on a clip equals the Trace-level function with
the model's own alignment_heads, and `Model.rank_alignment_heads` returns align --audio-data's report."""

from __future__ import annotations

import pytest
import soundfile
from attention_lens.model.analysis.timing.trace_times import word_timings

from attention_lens import load
from tests.fixtures.shaped_whisper import chirp, shaped_whisper_folder


@pytest.mark.slow
def test_word_timings_and_ranking_through_the_api(tmp_path):
    folder = shaped_whisper_folder(tmp_path / "whisper", alignment_heads=((1, 0), (0, 3)))
    for k, seconds in enumerate((1.6, 2.2)):
        soundfile.write(tmp_path / f"c{k}.wav", chirp(seconds, k), 16_000)
    (tmp_path / "list.tsv").write_text("c0.wav\tthe cat sat\t0.1-0.5 0.5-0.9 0.9-1.4\n"
                                       "c1.wav\ta small bird\t0.2-0.6 0.6-1.2 1.2-2.0\n")
    model = load(folder)
    trace = model.engine.trace(audio=str(tmp_path / "c0.wav"), target="the cat sat")
    words = model.word_timings(trace)
    assert [w.word for w in words] == ["the", "cat", "sat"]
    assert words == word_timings(trace, [(1, 0), (0, 3)])
    report = model.rank_alignment_heads(tmp_path / "list.tsv", alignment_heads=[(1, 1)],
                                        generation_config=tmp_path / "gen.json")
    assert report["alignment_heads"] == [[1, 1]] and report["n_words"] == 6 and len(report["heads"]) == 8
    assert '"alignment_heads"' in (tmp_path / "gen.json").read_text()
