"""The Whisper processor and config built offline for our own vocabulary."""

import numpy as np
import torch
from attention_lens.model.speech.processor import build_config, build_processor, special_tokens
from transformers import AutoProcessor, GenerationConfig, WhisperForConditionalGeneration

TEXTS = ["the cat sleeps .", "a dog will not bark in the garden .", "the king found the door that a woman opened ."] * 5


def test_special_tokens_follow_the_vocabulary_in_whispers_order():
    tok = build_processor(TEXTS, 300, 8).tokenizer
    ids = tok.convert_tokens_to_ids(special_tokens())
    assert ids == list(range(ids[0], ids[0] + len(ids)))
    assert tok.all_special_ids[-1] == tok.convert_tokens_to_ids("<|notimestamps|>")
    assert tok.convert_tokens_to_ids("<|de|>") == tok.convert_tokens_to_ids("<|startoftranscript|>") + 3
    tok.set_prefix_tokens(language="en", task="transcribe")
    ids = tok(" the cat sleeps.").input_ids
    assert tok.decode(ids) == "<|startoftranscript|><|en|><|transcribe|><|notimestamps|> the cat sleeps.<|endoftext|>"
    assert tok.decode(ids, skip_special_tokens=True) == " the cat sleeps."


def test_generate_runs_and_the_folder_round_trips(tmp_path):
    processor = build_processor(TEXTS, 300, 4)
    config, gen = build_config(processor, d_model=32, layers=2, heads=2)
    assert config.max_source_positions == 200 and processor.feature_extractor.nb_max_frames == 400
    torch.manual_seed(0)
    model = WhisperForConditionalGeneration(config).eval()
    samples = np.random.default_rng(0).normal(0, 0.1, 16000 * 2).astype(np.float32)
    feats = processor.feature_extractor(samples, sampling_rate=16000, return_tensors="pt").input_features
    assert feats.shape == (1, 80, 400)
    gen.max_length = 8
    out = model.generate(feats, generation_config=gen, language="en", task="transcribe")
    assert out.shape[0] == 1 and 1 <= out.shape[1] <= 8
    processor.save_pretrained(tmp_path)
    model.save_pretrained(tmp_path)
    gen.save_pretrained(tmp_path)
    back = AutoProcessor.from_pretrained(tmp_path)
    assert back.tokenizer(" the cat").input_ids == processor.tokenizer(" the cat").input_ids
    assert back.feature_extractor.chunk_length == 4
    reopened = WhisperForConditionalGeneration.from_pretrained(tmp_path).eval()
    loaded_gen = GenerationConfig.from_pretrained(tmp_path)
    assert loaded_gen.lang_to_id["<|en|>"] == processor.tokenizer.convert_tokens_to_ids("<|en|>")
    again = reopened.generate(feats, generation_config=loaded_gen, language="en", task="transcribe")
    assert torch.equal(out, again)
