"""train-speech: the labels, the auxiliary CTC loss and a folder that transformers opens as it is."""

import json

import numpy as np
import pytest
import torch
from attention_lens.model.speech.processor import build_processor
from attention_lens.model.training.speech import SpeechSetting, ctc_loss, labels_of, train_speech

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
