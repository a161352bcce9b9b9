"""Audio in through the command line and the Python API, on a tiny random Whisper (a 6 s window): `trace --audio`,
`trace --data` over a clip list, `eval --audio-data --json` (WER), `load(M).trace(audio=...)`; and every kind of bad
clip gets one line on stderr, exit code 2, and nothing else breaks (the next clip runs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import soundfile as sf
from attention_lens.model.cli import main
from attention_lens.model.engine import Trace, loader

from harness.models import whisper as fixture


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return fixture.build_whisper(tmp_path_factory.mktemp("speech") / "whisper-6s", window_s=6)


@pytest.fixture(scope="module")
def engine(folder):
    return loader.load_engine(folder)


@pytest.fixture
def cli(engine, folder, monkeypatch, capsys):
    """`python -m model ARGS` in this process, the model opened once for the module (load_engine returns it)."""
    monkeypatch.setattr(loader, "load_engine", lambda spec, **kw: engine)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out = capsys.readouterr()
        return code, out.out, out.err
    return run


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    d = tmp_path_factory.mktemp("clips")
    sf.write(d / "a.flac", fixture.clip(2.0), 16_000)
    sf.write(d / "b.wav", fixture.clip(1.5, rate=22_050, seed=1), 22_050)
    (d / "list.tsv").write_text("a.flac\tthe cat sat\nb.wav\tThe dog, barked!\n\nmissing.wav\thello\n")
    return d


def test_trace_audio_writes_a_trace_of_the_clip(cli, clips, tmp_path, folder):
    code, _, err = cli("trace", "--model", str(folder), "--audio", str(clips / "a.flac"), "--out",
                       str(tmp_path / "t.json"), "--max-len", "6", "--language", "de", "--task", "translate")
    assert code == 0, err
    trace = Trace.load(tmp_path / "t.json")
    assert trace.source["duration_s"] == 2.0 and trace.source_tokens[-1] == "padding 2.00–6.00 s"
    assert trace.forced_tokens == ("<|de|>", "<|translate|>", "<|notimestamps|>")
    assert "2.00 s of audio: 100 encoder positions + the padding band 2.00–6.00 s" in err
    code, _, err = cli("trace", "--model", str(folder), "--audio", str(clips / "b.wav"), "--target", "the dog",
                       "--no-causal-mask", "--out", str(tmp_path / "tf.npz"))
    assert code == 0, err
    tf = Trace.load(tmp_path / "tf.npz")
    assert tf.options.mode == "teacher_forced" and not tf.options.causal and tf.source["mel"].shape[0] == 80
    assert "resampled from 22050 Hz to 16000 Hz" in err


def test_trace_data_over_a_clip_list(cli, clips, tmp_path, folder):
    code, _, err = cli("trace", "--model", str(folder), "--data", str(clips / "list.tsv"), "--out",
                       str(tmp_path / "traces"), "--max-len", "4")
    assert code == 1  # the missing clip
    assert sorted(p.name for p in (tmp_path / "traces").iterdir()) == ["0001.json", "0002.json"]
    assert "line 4: error: missing.wav: no such audio file" in err.replace(str(clips) + "/", "")
    first = Trace.load(tmp_path / "traces" / "0001.json")
    assert first.options.mode == "teacher_forced"  # the list's transcript is the reference


def test_eval_audio_data_prints_the_word_error_rate(cli, clips, folder):
    code, out, err = cli("eval", "--model", str(folder), "--audio-data", str(clips / "list.tsv"), "--json")
    assert code == 1 and "line 4: error:" in err
    result = json.loads(out)
    assert result["n"] == 2 and result["failed"] == 1 and result["words"] == 6
    assert result["wer"] >= 0 and result["wer"] == result["errors"] / result["words"]
    assert [c["reference"] for c in result["clips"]] == ["the cat sat", "The dog, barked!"]
    assert (result["language"], result["task"]) == ("en", "transcribe")


def test_the_api_traces_a_path_or_an_array(folder, engine, clips, monkeypatch):
    import attention_lens

    monkeypatch.setattr(loader, "load_engine", lambda spec, **kw: engine)
    model = attention_lens.load(folder)
    from_path = model.trace(audio=clips / "a.flac", max_len=4)
    from_array = model.trace(audio=(fixture.clip(2.0), 16_000), max_len=4)
    np.testing.assert_allclose(from_path.cross_attention, from_array.cross_attention, atol=1e-4)
    assert from_path.source["duration_s"] == 2.0


def _bad(d, name):  # each kind of bad clip, written into the folder d; returns the path
    path = d / name
    if name == "not-audio.wav":
        path.write_text("this is not a sound file\n")
    elif name == "empty.wav":
        sf.write(path, np.zeros(0, dtype=np.float32), 16_000)
    elif name == "thirty-minutes.wav":
        sf.write(path, np.full(30 * 60 * 1000, 100, dtype=np.int16), 1000)  # 30 min at 1 kHz: 3.6 MB
    elif name == "nan.wav":
        samples = fixture.clip(1.0)
        samples[100:110] = np.nan
        samples[200] = np.inf
        sf.write(path, samples, 16_000, subtype="FLOAT")
    elif name == "truncated.flac":
        sf.write(d / "whole.flac", fixture.clip(3.0), 16_000)
        data = (d / "whole.flac").read_bytes()
        path.write_bytes(data[: len(data) // 3])
    elif name == "silence.wav":
        sf.write(path, np.zeros(16_000, dtype=np.float32), 16_000)
    return path


BAD = {
    "not-audio.wav": "not an audio file this tool reads",
    "empty.wav": "the clip has no samples",
    "thirty-minutes.wav": "the clip lasts 30 min 0 s; this model reads at most 6 s",
    "nan.wav": "11 samples are NaN or infinite",
    "truncated.flac": "",  # libsndfile reads a cut FLAC as far as it goes, or says it is damaged: either is fine
    "silence.wav": "the clip is silent",
}


@pytest.mark.parametrize("name", sorted(BAD))
def test_a_bad_clip_gets_one_line_and_the_next_clip_runs(cli, tmp_path, name, folder):
    path = _bad(tmp_path, name)
    code, out, err = cli("trace", "--model", str(folder), "--audio", str(path), "--out", str(tmp_path / "t.json"),
                         "--max-len", "3")
    if name == "truncated.flac" and code == 0:  # read up to the cut: a shorter clip, a trace of it
        assert Trace.load(tmp_path / "t.json").source["duration_s"] < 3.0
    else:
        lines = err.strip().splitlines()
        assert code == 2 and len(lines) == 1 and lines[0].startswith(f"error: {name}: "), err
        assert BAD[name] in lines[0] and "Traceback" not in err and not out
    sf.write(tmp_path / "good.wav", fixture.clip(1.0), 16_000)
    code, _, err = cli("trace", "--model", str(folder), "--audio", str(tmp_path / "good.wav"), "--out",
                       str(tmp_path / "good.json"), "--max-len", "3")
    assert code == 0, err


def test_eight_channels_at_192_khz_are_mixed_down_and_resampled(cli, tmp_path, folder):
    samples = np.stack([fixture.clip(0.5, rate=192_000, seed=k) for k in range(8)], axis=1)
    sf.write(tmp_path / "eight.wav", samples, 192_000)
    code, _, err = cli("trace", "--model", str(folder), "--audio", str(tmp_path / "eight.wav"), "--out",
                       str(tmp_path / "t.json"), "--max-len", "3")
    assert code == 0, err
    assert "resampled from 192000 Hz to 16000 Hz" in err and "8 channels mixed down to one" in err
    assert Trace.load(tmp_path / "t.json").source["duration_s"] == 0.5


def test_text_to_a_speech_model_is_one_line(cli, folder, tmp_path):
    code, _, err = cli("trace", "--model", str(folder), "--text", "the cat", "--out", str(tmp_path / "t.json"))
    assert code == 2 and err.count("\n") == 1 and "is a speech model (whisper): its source is a clip" in err


def test_a_clip_list_to_a_text_model_is_one_line(tmp_path, clips, capsys):
    from harness.models import hf_tiny

    text_folder = hf_tiny.build_marian(tmp_path / "marian")
    code = main(["eval", "--model", str(text_folder), "--audio-data", str(clips / "list.tsv")])
    err = capsys.readouterr().err
    assert code == 2 and "is a marian text model; a clip list is scored by a speech model" in err


def test_a_transcript_longer_than_the_decoder_reads_is_truncated_with_a_warning(cli, clips, folder, tmp_path):
    long = " ".join(["the cat sat on the mat"] * 20)  # with the forced prefix, more than the 64 positions
    code, _, err = cli("trace", "--model", str(folder), "--audio", str(clips / "a.flac"), "--target", long,
                       "--out", str(tmp_path / "t.json"))
    assert code == 0, err
    assert "so it was truncated" in err
    trace = Trace.load(tmp_path / "t.json")
    assert trace.m == 64 and trace.target_tokens[-1] == "<|endoftext|>"
