"""Whisper through the Hugging Face adapter, on a tiny random Whisper built with the real processor classes
(harness/models/whisper): the folder opens (it was refused as "decoder-only"), our attention is the model's own
`output_attentions` (before the padding collapse on the raw arrays, and after it), our greedy run is its
`generate`, rows sum to 1, the causal mask holds, and the switches work or are refused naming the family."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions, ModelInputError, Trace
from attention_lens.model.engine.audio_axis import AudioAxis
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.hf.whisper import WhisperEngine
from transformers import WhisperForConditionalGeneration

from harness.models import whisper as fixture

SECONDS = 3.2  # 160 encoder positions of the clip, then the padding band (1,340 positions)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    # Suppressing two ordinary pieces checks that our greedy run suppresses what generate suppresses.
    return fixture.build_whisper(tmp_path_factory.mktemp("whisper") / "whisper-tiny-random", suppress=(40, 41))


@pytest.fixture(scope="module")
def engine(folder) -> WhisperEngine:
    return load_engine(folder)


@pytest.fixture(scope="module")
def hf(folder):
    return WhisperForConditionalGeneration.from_pretrained(folder, attn_implementation="eager").eval()


@pytest.fixture(scope="module")
def samples() -> np.ndarray:
    return fixture.clip(SECONDS)


@pytest.fixture(scope="module")
def greedy(engine, samples) -> Trace:
    return engine.trace(audio=(samples, 16_000), options=DecodeOptions(max_len=8))


def test_a_whisper_folder_opens_as_a_speech_model(engine):
    # Before: "is a decoder-only model (whisper): it has no encoder, hence no cross-attention".
    assert isinstance(engine, WhisperEngine) and engine.family == "whisper" and engine.source_kind == "audio"
    assert (engine.n_encoder_layers, engine.n_decoder_layers, engine.n_heads) == (2, 2, 4)
    assert "en" in engine.spoken_languages() and engine.tasks() == ("transcribe", "translate")


def test_the_forced_prefix_is_whispers_and_is_shown_as_forced(engine, samples):
    trace = engine.trace(audio=(samples, 16_000), options=DecodeOptions(language="de", task="translate", max_len=6))
    assert trace.decoder_input_tokens[0] == "<|startoftranscript|>"
    assert trace.forced_tokens == ("<|de|>", "<|translate|>", "<|notimestamps|>")
    assert trace.target_tokens[:3] == trace.forced_tokens
    assert (trace.options.language, trace.options.task) == ("de", "translate")
    assert (trace.source["language"], trace.source["task"]) == ("de", "translate")
    with pytest.raises(ModelInputError, match="'xx' is not a language of this whisper model"):
        engine.trace(audio=(samples, 16_000), options=DecodeOptions(language="xx"))


def test_the_source_axis_is_the_clip_then_one_padding_band(greedy):
    trace = greedy
    assert trace.n == 161 and trace.source_tokens[:2] == ("0.00 s", "0.02 s")
    assert trace.source_tokens[-1] == "padding 3.20–30.00 s"
    src = trace.source
    assert src["kind"] == "audio" and src["window_s"] == 30.0 and src["frame_s"] == 0.02
    assert src["padding"] == {"index": 160, "start_s": 3.2, "end_s": 30.0, "frames": 1340}
    assert src["times"][:3] == [0.0, 0.02, 0.04] and len(src["times"]) == 161
    assert src["mel"].shape == (80, 320) and src["mel"].dtype == np.float32 and src["mel_hop_s"] == 0.01
    for kind in ("encoder_self_attention", "decoder_self_attention", "cross_attention"):
        np.testing.assert_allclose(getattr(trace, kind).sum(-1), 1.0, atol=1e-5)
    dec = trace.decoder_self_attention
    assert np.all(np.triu(dec, k=1) == 0)  # the causal mask holds


def test_attention_equals_the_models_own_before_and_after_the_collapse(engine, hf, samples):
    src, axis, _, _ = engine.audio_source((samples, 16_000))
    labels = [*engine.forced_prefix(DecodeOptions()), *engine.encode_target("the cat sat")]
    run = engine.teacher_forced_batch([src], [labels], DecodeOptions(mode="teacher_forced"))[0]
    dec_in = torch.tensor([[engine.start_id, *labels[:-1]]])
    with torch.no_grad():
        out = hf(input_features=src.features[None], decoder_input_ids=dec_in, output_attentions=True)
    own = {"enc_attn": out.encoder_attentions, "dec_attn": out.decoder_attentions, "cross_attn": out.cross_attentions}
    for name, theirs in own.items():  # the raw arrays: every one of the window's 1,500 positions
        np.testing.assert_allclose(getattr(run, name), np.stack([a[0].numpy() for a in theirs]), atol=1e-6)
    trace = engine.trace(audio=(samples, 16_000), target="the cat sat")
    cross = np.stack([a[0].numpy() for a in out.cross_attentions])
    enc = np.stack([a[0].numpy() for a in out.encoder_attentions])
    k = axis.clip_positions
    np.testing.assert_allclose(trace.cross_attention[..., :k], cross[..., :k], atol=1e-6)
    np.testing.assert_allclose(trace.cross_attention[..., k], cross[..., k:].sum(-1), atol=1e-5)
    np.testing.assert_allclose(trace.encoder_self_attention[..., :k, :k], enc[..., :k, :k], atol=1e-6)
    np.testing.assert_allclose(trace.encoder_self_attention[..., k, :k], enc[..., k:, :k].mean(-2), atol=1e-6)
    np.testing.assert_allclose(trace.encoder_self_attention[..., k, k], enc[..., k:, k:].sum(-1).mean(-1), atol=1e-5)
    np.testing.assert_allclose(trace.steps[3].extra["target_prob"],
                               out.logits[0, 3].softmax(-1)[labels[3]].item(), rtol=1e-5)


def test_greedy_equals_generate(engine, hf, samples):
    language, task = "de", "translate"
    src, _, _, _ = engine.audio_source((samples, 16_000))
    trace = engine.trace(audio=(samples, 16_000), options=DecodeOptions(language=language, task=task, max_len=16))
    with torch.no_grad():
        theirs = hf.generate(input_features=src.features[None], language=language, task=task, max_new_tokens=13)
    ours = [s.id for s in trace.steps]
    assert ours[:3] == list(engine.forced_prefix(DecodeOptions(language=language, task=task)))
    assert ours[3:] == theirs[0].tolist()[: len(ours) - 3]  # generate returns the tokens after its prompt
    assert len(ours) > 6 and not {40, 41} & set(ours[3:])  # the generation config's suppress_tokens


def test_cached_decoding_equals_teacher_forcing_on_its_own_output(engine, samples, greedy):
    src, _, _, _ = engine.audio_source((samples, 16_000))
    labels = [s.id for s in greedy.steps]
    forced = engine.teacher_forced_batch([src], [labels], DecodeOptions(mode="teacher_forced"))[0]
    run = engine.run_generate(src, DecodeOptions(max_len=8))
    assert run.out_ids == labels and forced.dec_in_ids == run.dec_in_ids
    for name in ("enc_attn", "dec_attn", "cross_attn"):
        np.testing.assert_allclose(getattr(run, name), getattr(forced, name), atol=1e-5)
    np.testing.assert_allclose(run.logits, forced.logits, atol=1e-4)


def test_beam_of_width_one_is_greedy(engine, samples, greedy):
    beam = engine.trace(audio=(samples, 16_000), options=DecodeOptions(mode="beam", beam_size=1, max_len=8))
    assert beam.target_tokens == greedy.target_tokens and beam.source == beam.beams[0].source
    np.testing.assert_allclose(beam.cross_attention, greedy.cross_attention, atol=1e-5)


def test_leakage_switches_work_in_teacher_forcing(engine, samples):
    audio = (samples, 16_000)
    base = DecodeOptions(mode="teacher_forced")
    healthy = engine.trace(audio=audio, target="the cat sat on the mat", options=base)
    assert healthy.forced_tokens == healthy.target_tokens[:3] == ("<|en|>", "<|transcribe|>", "<|notimestamps|>")
    no_mask = engine.trace(audio=audio, target="the cat sat on the mat", options=DecodeOptions(
        mode="teacher_forced", causal=False))
    assert np.all(np.triu(healthy.decoder_self_attention, k=1) == 0)
    assert np.triu(no_mask.decoder_self_attention, k=1).sum() > 0.1  # the upper triangle appears
    np.testing.assert_allclose(no_mask.decoder_self_attention.sum(-1), 1.0, atol=1e-5)
    no_shift = engine.trace(audio=audio, target="the cat sat on the mat", options=DecodeOptions(
        mode="teacher_forced", shift=False))
    assert no_shift.decoder_input_tokens == no_shift.target_tokens
    assert healthy.decoder_input_tokens[1:] == healthy.target_tokens[:-1]


def test_bug_switches_and_replays_are_refused_naming_the_family(engine, samples):
    for bug in ("mask_after_softmax", "swap_cross", "unscaled"):
        with pytest.raises(ModelInputError, match=r"\(whisper\)"):
            engine.trace(audio=(samples, 16_000), target="the cat", options=DecodeOptions(**{bug: True}))
    for option in ("contributions", "lens", "saliency"):
        with pytest.raises(ModelInputError, match="whisper"):
            engine.trace(audio=(samples, 16_000), options=DecodeOptions(**{option: True}))


def test_a_head_switched_off_gives_it_no_output(engine, samples):
    options = DecodeOptions(mode="teacher_forced", ablate=("cross:1:2",))
    off = engine.trace(audio=(samples, 16_000), target="the cat", options=options)
    plain = engine.trace(audio=(samples, 16_000), target="the cat")
    assert off.options.ablate == ("cross:1:2",)
    assert not np.allclose(off.cross_attention[1], plain.cross_attention[1])  # layer 2 reads a changed stream


def test_text_is_refused_by_a_speech_model_and_audio_by_a_text_model(engine, samples, tmp_path):
    for call in (lambda: engine.trace("the cat sat"), lambda: engine.prepare_source("the cat"),
                 lambda: engine.encode_source("the cat"), lambda: engine.normalise("the cat")):
        with pytest.raises(ModelInputError, match="speech model .*not text"):
            call()
    from harness.models import hf_tiny

    text = load_engine(hf_tiny.build_marian(tmp_path / "marian"))
    assert text.source_kind == "text" and text.spoken_languages() == ()
    with pytest.raises(ModelInputError, match="reads text, not audio"):
        text.trace(audio=(samples, 16_000))


def test_a_trace_with_an_audio_source_round_trips_as_json_and_npz(greedy, tmp_path):
    trace = greedy
    for name in ("t.json", "t.npz"):
        trace.save(tmp_path / name)
        back = Trace.load(tmp_path / name)
        assert back.source_tokens == trace.source_tokens and back.forced_tokens == trace.forced_tokens
        np.testing.assert_array_equal(back.source["mel"], trace.source["mel"])
        assert {k: v for k, v in back.source.items() if k != "mel"} == \
               {k: v for k, v in trace.source.items() if k != "mel"}
        np.testing.assert_array_equal(back.cross_attention, trace.cross_attention)
    bad = trace.to_dict()
    bad["source"]["times"] = bad["source"]["times"][:-1]
    with pytest.raises(ValueError, match="times but the trace 161 source positions"):
        Trace.from_dict(bad)


def test_the_axis_collapses_the_padding_band():
    axis = AudioAxis.of_clip(0.05, n_positions=6, frame_s=0.02)
    assert (axis.clip_positions, axis.n, axis.labels()) == (3, 4, ["0.00 s", "0.02 s", "0.04 s",
                                                                   "padding 0.06–0.12 s"])
    rng = np.random.default_rng(0)
    w = rng.random((1, 1, 6, 6)).astype(np.float32)
    w /= w.sum(-1, keepdims=True)
    enc = axis.collapse_encoder(w)
    assert enc.shape == (1, 1, 4, 4)
    np.testing.assert_allclose(enc.sum(-1), 1.0, atol=1e-6)
    np.testing.assert_allclose(enc[0, 0, 3, :3], w[0, 0, 3:, :3].mean(0), atol=1e-6)
    full = AudioAxis.of_clip(0.12, n_positions=6, frame_s=0.02)
    assert not full.padded and full.n == 6 and full.collapse_encoder(w) is w
