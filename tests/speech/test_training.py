"""train-speech: the labels, the auxiliary CTC loss and a folder that transformers opens as it is."""

import json
import random

import numpy as np
import pytest
import torch
from attention_lens.model.speech.processor import build_config, build_processor
from attention_lens.model.training.speech import (
    CTC_CHARS,
    SpeechSetting,
    char_targets,
    crop_frames,
    ctc_loss,
    encode,
    labels_of,
    train_speech,
)

TEXTS = ["the cat sleeps.", "a dog will not bark in the garden.", "the king found the door."]


def test_labels_follow_the_start_token_and_ctc_scores_only_the_words():
    tok = build_processor([" " + t for t in TEXTS], 300, 4).tokenizer
    labels = labels_of(tok, TEXTS[:2], tok.pad_token_id)
    first = tok.convert_ids_to_tokens([int(t) for t in labels[0] if t >= 0])
    assert first[:3] == ["<|en|>", "<|transcribe|>", "<|notimestamps|>"] and first[-1] == "<|endoftext|>"
    assert tok.decode([int(t) for t in labels[0] if t >= 0], skip_special_tokens=True) == " the cat sleeps."
    assert (labels[0] == -100).sum() > 0 and (labels[1] == -100).sum() == 0
    logits = torch.zeros(2, 50, len(tok) + 1)
    loss = ctc_loss(logits, labels, tok)
    assert torch.isfinite(loss) and loss > 0


def test_character_targets_spell_the_normalised_transcript():
    (row,) = char_targets(["The cat's mat, sleeps."])
    assert "".join(CTC_CHARS[i] for i in row) == "the cat's mat sleeps"
    loss = ctc_loss(torch.zeros(1, 40, len(CTC_CHARS) + 1), [row])
    assert torch.isfinite(loss) and loss > 0


def test_the_cropped_encoder_is_the_encoder_on_the_whole_window_and_reads_any_shorter_one():
    from transformers import WhisperForConditionalGeneration

    processor = build_processor([" " + t for t in TEXTS], 300, 4)
    config, _ = build_config(processor, 32, 2, 2, 4, 24, decoder_layers=1)
    encoder = WhisperForConditionalGeneration(config).model.encoder.eval()
    x = torch.randn(2, 80, 400)
    with torch.no_grad():
        assert torch.allclose(encode(encoder, x), encoder(x).last_hidden_state, atol=1e-5)
        assert encode(encoder, x[:, :, :120]).shape == (2, 60, 32)


def test_a_batch_is_read_to_its_longest_clip_or_the_whole_window():
    rng = random.Random(0)
    frames = [crop_frames([1.0, 2.31], 600, rng, 0.25) for _ in range(400)]
    assert set(frames) == {252, 600}  # 2.31 s + 0.2 s = 251 frames, made even; or the whole window
    assert 0.15 < frames.count(600) / len(frames) < 0.35
    assert crop_frames([5.9], 600, rng, 0.0) == 600 and crop_frames([1.0], 600, rng, 1.0) == 600


@pytest.mark.slow
def test_a_short_run_writes_a_whisper_folder_with_its_card(tmp_path):
    from transformers import AutoProcessor, WhisperForConditionalGeneration

    rng = np.random.default_rng(0)
    for split, texts in (("train", TEXTS * 3), ("valid", TEXTS)):
        folder = tmp_path / "data" / split
        folder.mkdir(parents=True)
        np.save(folder / "features.npy", rng.normal(0, 0.3, (len(texts), 80, 400)).astype(np.float16))
        (folder / "list.tsv").write_text("".join(f"clips/{i}.flac\t{t}\n" for i, t in enumerate(texts)))
    out = tmp_path / "model"
    setting = SpeechSetting(d_model=32, encoder_layers=1, decoder_layers=1, heads=2, batch=4, eval_every=2,
                            time_budget_min=0.02, threads=1, max_target_positions=24)
    card = train_speech(tmp_path / "data", out, setting, log=lambda _msg: None)
    assert card["steps"] >= 2 and card["window_s"] == 4
    assert json.loads((out / "card.json").read_text())["valid_wer"] == card["valid_wer"]
    model = WhisperForConditionalGeneration.from_pretrained(out)
    processor = AutoProcessor.from_pretrained(out)
    assert model.config.max_source_positions == 200 and processor.feature_extractor.chunk_length == 4
    assert not any("ctc" in name for name in model.state_dict())
