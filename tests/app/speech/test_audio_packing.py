"""An audio run packed for the browser: pooled frames keep every row's sum, the padding stays one column, the
spectrogram and samples read back, and a 10 s clip at whisper-tiny's dimensions fits in 4 MB."""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.app.render import spectrogram
from attention_lens.app.render import stepper as packing

from tests.fixtures.audio_trace import audio_trace, tone


def test_pooled_rows_still_sum_to_one_and_padding_is_one_column():
    trace = audio_trace(seconds=3.2)
    run = spectrogram.pooled(trace, 3)
    frames = 160  # 3.2 s of 20 ms frames
    columns = -(-frames // 3)
    assert run.n == columns + 1
    assert run.source["padding"]["index"] == columns
    assert run.source_tokens[-1] == trace.source_tokens[-1]  # the padding's label, as the engine wrote it
    np.testing.assert_allclose(run.cross_attention.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(run.encoder_self_attention.sum(-1), 1.0, atol=1e-5)
    # a column is the sum of its frames' weights; a row the mean of its frames' rows; the padding kept as it was
    np.testing.assert_allclose(run.cross_attention[..., 1], trace.cross_attention[..., 3:6].sum(-1), rtol=1e-5)
    np.testing.assert_allclose(run.cross_attention[..., -1], trace.cross_attention[..., -1])
    np.testing.assert_allclose(run.encoder_self_attention[:, :, 0, -1],
                               trace.encoder_self_attention[:, :, 0:3, -1].mean(-1), rtol=1e-5)
    assert run.source["times"][1] == pytest.approx(0.06)
    assert run.source["frame_s"] == pytest.approx(0.06)


def test_short_clip_is_not_pooled():
    trace = audio_trace(seconds=2.0)
    assert spectrogram.for_browser(trace) is trace


def test_a_text_run_is_left_as_it_is():
    from dataclasses import replace

    plain = replace(audio_trace(seconds=1.0), source=None)
    assert spectrogram.audio_source(plain) is None
    assert spectrogram.for_browser(plain) is plain


def test_ten_second_clip_at_whisper_tiny_fits_in_four_megabytes():
    words = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten") * 2
    trace = audio_trace(seconds=10.0, words=words)
    run = spectrogram.for_browser(trace)
    assert run.n == 168  # 500 frames, three to a column, and the padding
    body = packing.weights(run, spectrogram.ENCODING)
    samples = tone(10.0)
    audio, tail = spectrogram.audio_tail(run, samples, len(body[1]))
    blob = packing.pack(run, encoding=spectrogram.ENCODING, extra={"audio": audio}, encoded=body, tail=tail)
    assert len(blob) <= 4 * 1024 * 1024
    header, arrays = packing.unpack(blob)
    assert header["max_error"] <= 2.5e-4
    np.testing.assert_allclose(arrays["cross_attention"], run.cross_attention, atol=header["max_error"] + 1e-6)
    mel, pcm = spectrogram.unpack_audio(blob)
    assert mel.shape == trace.source["mel"].shape
    assert np.corrcoef(mel.ravel().astype(float), trace.source["mel"].ravel())[0, 1] > 0.99
    np.testing.assert_allclose(pcm / 32767, samples, atol=1e-4)


def test_stretch_is_the_span_of_the_top_frames():
    w = np.zeros(11)
    w[4], w[6], w[10] = 0.3, 0.3, 0.4  # 10: the padding column, left out of the clip's stretch
    times = [i * 0.02 for i in range(11)]
    assert spectrogram.stretch(w, times, 0.02, 10) == pytest.approx((0.08, 0.10))  # half the clip's 0.6: one column
    assert spectrogram.stretch(w, times, 0.02, 10, share=0.8) == pytest.approx((0.08, 0.14))
    assert spectrogram.stretch(np.zeros(11), times, 0.02, 10) is None
