"""The spoken grammar corpus: held-out voices and rates, a list, CTM timings and log-mels that agree."""

import numpy as np
import pytest
import soundfile
from attention_lens.model.speech import corpus, synthesis
from attention_lens.model.speech.processor import build_feature_extractor
from attention_lens.model.speech.scoring import normalise, word_error_rate

needs_espeak = pytest.mark.skipif(not synthesis.available(), reason="libespeak-ng is not installed")


def test_test_and_valid_voices_and_rates_are_never_heard_in_train():
    train_variants = set(corpus.VARIANTS["train"])
    for split in ("valid", "test"):
        assert not train_variants & set(corpus.VARIANTS[split])
        assert not set(corpus.RATES["train"]) & set(corpus.RATES[split])
        assert not set(corpus.voices("train")) & set(corpus.voices(split))


def test_transcripts_join_the_full_stop_and_wer_ignores_case_and_punctuation():
    assert corpus.transcript_of("the cat sleeps .") == "the cat sleeps."
    assert normalise("The cat, sleeps.") == "the cat sleeps"
    assert word_error_rate(["the cat sleeps."], ["The cat sleeps"]) == 0.0
    assert word_error_rate(["the cat sleeps.", "a dog barks."], ["the cat", "a dog barks"]) == pytest.approx(1 / 6)


@needs_espeak
def test_a_split_writes_clips_timings_and_features_that_agree(tmp_path):
    fe = build_feature_extractor(6)
    folder = corpus.write_split(tmp_path, "test", 3, fe, log=lambda _msg: None)
    rows = [line.split("\t") for line in (folder / "list.tsv").read_text().splitlines()]
    assert len(rows) == 3
    ctm = [line.split() for line in (folder / "timings.ctm").read_text().splitlines()]
    feats = np.load(folder / "features.npy")
    assert feats.shape == (3, 80, 600) and feats.dtype == np.float16
    for k, (path, transcript) in enumerate(rows):
        samples, rate = soundfile.read(folder / path)
        assert rate == 16000 and len(samples) / rate <= 6 - corpus.MARGIN_S
        clip_id = path.split("/")[-1].removesuffix(".flac")
        words = [c for c in ctm if c[0] == clip_id]
        assert [w[4] for w in words] == normalise(transcript).split()
        starts = [float(w[2]) for w in words]
        assert starts == sorted(starts) and float(words[-1][2]) + float(words[-1][3]) <= len(samples) / rate + 1e-3
        again = fe(samples.astype(np.float32), sampling_rate=16000, return_tensors="np").input_features[0]
        assert np.abs(again - feats[k].astype(np.float32)).max() < 0.02


def test_a_clip_list_reads_paths_relative_to_itself_and_names_a_bad_line(tmp_path):
    from attention_lens.model.speech.scoring import read_clip_list

    lst = tmp_path / "list.tsv"
    lst.write_text(f"clips/a.flac\tthe cat sleeps.\n{tmp_path / 'b.wav'}\ta dog barks.\n", encoding="utf-8")
    assert read_clip_list(lst) == [(str(tmp_path / "clips" / "a.flac"), "the cat sleeps."),
                                   (str(tmp_path / "b.wav"), "a dog barks.")]
    lst.write_text("clips/a.flac\tthe cat\n\nonly a path\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"list.tsv:3: expected clip path<TAB>transcript"):
        read_clip_list(lst)
