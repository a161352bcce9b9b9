"""Whisper at the dimensions people run (whisper-small: 12 + 12 layers, 12 heads, d_model 768, a 51,865-token
vocabulary) opens within the default model size limit: the model built on the meta device (shapes, no storage), as
the text families' size test does. The time and memory of a 30 s clip's trace at those dimensions are measured by
benchmarks/speech_trace.py."""

from __future__ import annotations

import torch
from attention_lens.model.engine.audio_axis import AudioAxis
from attention_lens.model.engine.safety import ENV_MAX_MB, check_size, module_shapes
from transformers import WhisperConfig, WhisperForConditionalGeneration

from harness.models.whisper import DIMS


def test_whisper_small_opens_within_the_default_size_limit(monkeypatch):
    monkeypatch.delenv(ENV_MAX_MB, raising=False)
    d = DIMS["whisper-small"]
    config = WhisperConfig(vocab_size=d["vocab"], d_model=d["d_model"], encoder_layers=d["layers"],
                           decoder_layers=d["layers"], encoder_attention_heads=d["heads"],
                           decoder_attention_heads=d["heads"], encoder_ffn_dim=4 * d["d_model"],
                           decoder_ffn_dim=4 * d["d_model"], max_target_positions=d["target_positions"])
    with torch.device("meta"):
        skeleton = WhisperForConditionalGeneration(config)
    n_params = module_shapes(skeleton)[2]
    assert 240_000_000 < n_params < 245_000_000  # openai/whisper-small: 241.7 M
    check_size("whisper-small", n_params, file_bytes=n_params * 4)  # raises CheckpointError when over the limit


def test_a_30_s_clip_fills_the_window_and_a_longer_one_is_cut_to_it():
    axis = AudioAxis.of_clip(30.0, n_positions=1500, frame_s=0.02)
    assert not axis.padded and axis.n == 1500 and axis.labels()[-1] == "29.98 s"  # no band
    assert AudioAxis.of_clip(31.0, n_positions=1500, frame_s=0.02).n == 1500
    short = AudioAxis.of_clip(5.0, n_positions=1500, frame_s=0.02)
    assert short.n == 251 and short.labels()[-1] == "padding 5.00–30.00 s"  # 250 positions and the band
