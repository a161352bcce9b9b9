"""A Hugging Face Whisper processor and config for a vocabulary of our own, built offline.

`build_processor(texts, vocab_size, window_s)` trains a byte-level BPE on `texts` with the `tokenizers` library and
wraps it as a `WhisperTokenizer` with Whisper's special tokens laid out as OpenAI's checkpoints lay them out
(`<|endoftext|>` right after the BPE vocabulary, then `<|startoftranscript|>`, one `<|xx|>` per Whisper language in
Whisper's order, `<|translate|>`, `<|transcribe|>`, `<|startoflm|>`, `<|startofprev|>`, `<|nospeech|>`,
`<|notimestamps|>`; no timestamp tokens), beside a `WhisperFeatureExtractor` (80 mel bins, 16 kHz) whose window is
`window_s` seconds instead of 30.

`build_config(processor, d_model, layers, heads, window_s)` gives the matching `WhisperConfig` and
`GenerationConfig`, so that `WhisperForConditionalGeneration(config).generate(features, generation_config=gen,
language="en", task="transcribe")` runs and `transformers` opens the saved folder with no code of ours.
"""

from __future__ import annotations

from collections.abc import Iterable

from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
from transformers import (
    AddedToken,
    GenerationConfig,
    WhisperConfig,
    WhisperFeatureExtractor,
    WhisperProcessor,
    WhisperTokenizer,
)
from transformers.models.whisper.tokenization_whisper import LANGUAGES

SAMPLE_RATE = 16_000
N_MELS = 80
HOP_LENGTH = 160  # 10 ms frames; the encoder's second convolution halves them: 50 positions a second
FRAMES_PER_SECOND = SAMPLE_RATE // HOP_LENGTH
ENCODER_POSITIONS_PER_SECOND = FRAMES_PER_SECOND // 2
TASKS = ("translate", "transcribe")  # Whisper's order of the two task tokens
SPECIAL_TAIL = ("<|startoflm|>", "<|startofprev|>", "<|nospeech|>", "<|notimestamps|>")


def special_tokens() -> list[str]:
    """Whisper's special tokens in the order of its vocabulary (timestamp tokens left out)."""
    return (["<|endoftext|>", "<|startoftranscript|>"] + [f"<|{code}|>" for code in LANGUAGES]
            + [f"<|{task}|>" for task in TASKS] + list(SPECIAL_TAIL))


def train_bpe(texts: Iterable[str], vocab_size: int) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE (GPT-2's byte alphabet, no prefix space) trained on `texts`: its vocabulary and merges.
    `vocab_size` counts the 256 bytes and the merges, not the special tokens."""
    if vocab_size < 257:
        raise ValueError(f"vocab_size {vocab_size} leaves no room for merges beyond the 256 bytes")
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  show_progress=False)
    tok.train_from_iterator(texts, trainer=trainer)
    model = tok.get_vocab()
    merges = [tuple(m.split(" ", 1)) if isinstance(m, str) else tuple(m)
              for m in _merges_of(tok)]
    return model, merges


def _merges_of(tok: Tokenizer) -> list:
    import json

    return json.loads(tok.to_str())["model"]["merges"]


def build_tokenizer(texts: Iterable[str], vocab_size: int) -> WhisperTokenizer:
    """A `WhisperTokenizer` over a BPE trained on `texts`, with Whisper's special tokens after the BPE's ids."""
    vocab, merges = train_bpe(texts, vocab_size)
    # <|endoftext|> (unk, bos, eos, pad) takes the first id after the BPE's, the others follow in Whisper's order
    # and are flagged special, so that `all_special_ids[-1]` is <|notimestamps|> as `transformers` expects.
    tokenizer = WhisperTokenizer(vocab=vocab, merges=merges, pad_token="<|endoftext|>")
    tokenizer.add_special_tokens({"extra_special_tokens": [
        AddedToken(t, special=True, normalized=False, lstrip=False, rstrip=False) for t in special_tokens()[1:]]})
    # The prefix (sot, language, task, notimestamps) is read from the vocabulary: set it again now that it is there.
    tokenizer.set_prefix_tokens()
    return tokenizer


def build_feature_extractor(window_s: int) -> WhisperFeatureExtractor:
    """Whisper's log-mel front end (80 bins, 25 ms window, 10 ms hop, 16 kHz) over a `window_s`-second window."""
    return WhisperFeatureExtractor(feature_size=N_MELS, sampling_rate=SAMPLE_RATE, hop_length=HOP_LENGTH,
                                   chunk_length=int(window_s), n_fft=400, padding_value=0.0)


def build_processor(texts: Iterable[str], vocab_size: int = 512, window_s: int = 30) -> WhisperProcessor:
    """A `WhisperProcessor`: the feature extractor for `window_s` seconds and a tokenizer trained on `texts`
    (byte-level BPE of `vocab_size` pieces, then Whisper's special tokens)."""
    return WhisperProcessor(feature_extractor=build_feature_extractor(window_s),
                            tokenizer=build_tokenizer(texts, vocab_size))


def token_id(tokenizer: WhisperTokenizer, token: str) -> int:
    i = tokenizer.convert_tokens_to_ids(token)
    if i is None or i == tokenizer.unk_token_id and token != tokenizer.unk_token:
        raise ValueError(f"the tokenizer has no {token}")
    return int(i)


def build_config(processor: WhisperProcessor, d_model: int = 256, layers: int = 2, heads: int = 4,
                 window_s: int | None = None, max_target_positions: int = 128,
                 decoder_layers: int | None = None) -> tuple[WhisperConfig, GenerationConfig]:
    """A `WhisperConfig` (pre-LN encoder–decoder, two convolutions, sinusoidal encoder positions, FFN 4 x d_model)
    with `layers` encoder layers (`decoder_layers`, by default the same) of `heads` heads, and its
    `GenerationConfig`: the forced prefix `<|startoftranscript|><|xx|><|task|><|notimestamps|>` comes from
    `language=` and `task=` of `generate`; `alignment_heads` is every head of the decoder's second half until a
    ranking picks better ones. `window_s` defaults to the feature extractor's chunk length."""
    fe, tok = processor.feature_extractor, processor.tokenizer
    window = int(window_s if window_s is not None else fe.chunk_length)
    if window != fe.chunk_length:
        raise ValueError(f"window_s {window} differs from the feature extractor's chunk_length {fe.chunk_length}")
    dec_layers = layers if decoder_layers is None else decoder_layers
    eot = token_id(tok, "<|endoftext|>")
    sot = token_id(tok, "<|startoftranscript|>")
    lang_to_id = {f"<|{code}|>": token_id(tok, f"<|{code}|>") for code in LANGUAGES}
    task_to_id = {task: token_id(tok, f"<|{task}|>") for task in TASKS}
    no_ts = token_id(tok, "<|notimestamps|>")
    config = WhisperConfig(
        vocab_size=len(tok), num_mel_bins=fe.feature_size, d_model=d_model,
        encoder_layers=layers, encoder_attention_heads=heads, encoder_ffn_dim=4 * d_model,
        decoder_layers=dec_layers, decoder_attention_heads=heads, decoder_ffn_dim=4 * d_model,
        max_source_positions=window * ENCODER_POSITIONS_PER_SECOND, max_target_positions=max_target_positions,
        pad_token_id=eot, bos_token_id=eot, eos_token_id=eot, decoder_start_token_id=sot,
        suppress_tokens=[], begin_suppress_tokens=[eot], dropout=0.0, activation_function="gelu",
        scale_embedding=False, tie_word_embeddings=True,
    )
    half = dec_layers // 2
    gen = GenerationConfig(
        decoder_start_token_id=sot, bos_token_id=eot, eos_token_id=eot, pad_token_id=eot,
        max_length=max_target_positions, lang_to_id=lang_to_id, task_to_id=task_to_id,
        no_timestamps_token_id=no_ts, prev_sot_token_id=token_id(tok, "<|startofprev|>"),
        is_multilingual=True, suppress_tokens=[], begin_suppress_tokens=[eot],
        alignment_heads=[[layer, head] for layer in range(half, dec_layers) for head in range(heads)],
        median_filter_width=7, return_timestamps=False,
    )
    return config, gen
