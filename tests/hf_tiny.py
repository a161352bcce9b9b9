"""Tiny random Hugging Face model folders built from configs, with tokenizers trained here (no download).

Seq2seq: Marian (source.spm / target.spm + vocab.json), T5 (spiece.model), BART (byte-level BPE vocab.json +
merges.txt). For the refusal tests: an encoder-only BERT folder, a decoder-only GPT-2 folder, a Marian folder
without tokenizer files. Each builder writes a folder and returns its path; weights are random (seeded).
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import sentencepiece as spm
import torch

SENTENCES = [
    "the cat sat on the mat .", "the black dog barked at the cat .", "a small bird sings in the tall tree .",
    "the man found the bank near the river .", "my sister reads a long book every night .",
    "le chat s' assit sur le tapis .", "le chien noir aboya contre le chat .",
    "un petit oiseau chante dans le grand arbre .", "l' homme trouva la banque près de la rivière .",
    "ma soeur lit un long livre chaque soir .",
]
SMALL = dict(d_model=32, layers=2, heads=4, ffn=64, positions=64)
INIT_STD = 0.2  # ten times the library default, so that random attention is peaked and inputs matter


def _train_spm(vocab_size: int, **ids: int) -> bytes:
    """A SentencePiece unigram model trained on SENTENCES, as bytes."""
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(SENTENCES * 10), model_writer=buf, vocab_size=vocab_size, model_type="unigram",
        character_coverage=1.0, hard_vocab_limit=False, minloglevel=2, **ids)
    return buf.getvalue()


def _save(model: torch.nn.Module, folder: Path) -> Path:
    model.eval()
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder


def build_marian(folder: Path, seed: int = 0, tokenizer: bool = True, **overrides) -> Path:
    """overrides: MarianConfig fields (sizes); the tokenizer reads as far as max_position_embeddings."""
    from transformers import MarianConfig, MarianMTModel, MarianTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    blob = _train_spm(80)
    for name in ("source.spm", "target.spm"):
        (folder / name).write_bytes(blob)
    sp = spm.SentencePieceProcessor(model_proto=blob)
    # Marian's vocab.json: </s> first, <unk> second, the pieces, <pad> last (as in the opus-mt models).
    pieces = [sp.id_to_piece(i) for i in range(sp.get_piece_size()) if not sp.is_control(i) and not sp.is_unknown(i)]
    vocab = {"</s>": 0, "<unk>": 1, **{p: i + 2 for i, p in enumerate(pieces)}}
    vocab["<pad>"] = len(vocab)
    (folder / "vocab.json").write_text(json.dumps(vocab, ensure_ascii=False))
    if tokenizer:
        MarianTokenizer(str(folder / "source.spm"), str(folder / "target.spm"), str(folder / "vocab.json"),
                        model_max_length=overrides.get("max_position_embeddings", SMALL["positions"]),
                        ).save_pretrained(str(folder))
    else:
        for name in ("source.spm", "target.spm", "vocab.json"):
            (folder / name).unlink()
    v, s = len(vocab), SMALL
    params = dict(vocab_size=v, decoder_vocab_size=v, d_model=s["d_model"], encoder_layers=s["layers"],
                  decoder_layers=s["layers"], encoder_attention_heads=s["heads"], decoder_attention_heads=s["heads"],
                  encoder_ffn_dim=s["ffn"], decoder_ffn_dim=s["ffn"], max_position_embeddings=s["positions"],
                  pad_token_id=v - 1, eos_token_id=0, decoder_start_token_id=v - 1, dropout=0.0,
                  attention_dropout=0.0, activation_dropout=0.0, init_std=INIT_STD)
    params.update(overrides)
    torch.manual_seed(seed)
    return _save(MarianMTModel(MarianConfig(**params)), folder)


def build_t5(folder: Path, seed: int = 0) -> Path:
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    folder.mkdir(parents=True, exist_ok=True)
    # T5's id convention: pad 0, eos 1, unk 2; the pad id is also the decoder start.
    (folder / "spiece.model").write_bytes(_train_spm(80, pad_id=0, eos_id=1, unk_id=2, bos_id=-1))
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "T5Tokenizer", "extra_ids": 0}))
    tok = AutoTokenizer.from_pretrained(str(folder))  # converts spiece.model to a fast tokenizer
    tok.save_pretrained(str(folder))
    s = SMALL
    config = T5Config(vocab_size=len(tok), d_model=s["d_model"], d_kv=s["d_model"] // s["heads"], d_ff=s["ffn"],
                      num_layers=s["layers"], num_decoder_layers=s["layers"], num_heads=s["heads"],
                      relative_attention_num_buckets=8, relative_attention_max_distance=16, dropout_rate=0.0,
                      pad_token_id=0, eos_token_id=1, decoder_start_token_id=0)
    torch.manual_seed(seed)
    return _save(T5ForConditionalGeneration(config), folder)


def _train_bpe(folder: Path) -> int:
    """Byte-level BPE (vocab.json + merges.txt) with BART's special tokens at ids 0-3; returns the vocab size."""
    from tokenizers import ByteLevelBPETokenizer

    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator(SENTENCES * 10, vocab_size=320, min_frequency=2,
                            special_tokens=["<s>", "<pad>", "</s>", "<unk>", "<mask>"], show_progress=False)
    bpe.save_model(str(folder))
    return bpe.get_vocab_size()


def _bpe_tokenizer(folder: Path, tokenizer_class: str):
    """A byte-level BPE tokenizer folder, read back through AutoTokenizer and saved in its own format."""
    from transformers import AutoTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    _train_bpe(folder)
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": tokenizer_class}))
    tok = AutoTokenizer.from_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return tok


def build_bart(folder: Path, seed: int = 0) -> Path:
    from transformers import BartConfig, BartForConditionalGeneration

    tok = _bpe_tokenizer(folder, "BartTokenizer")
    s = SMALL
    # As facebook/bart-large: decoding starts with </s>, and <s> is forced as the first generated token.
    config = BartConfig(vocab_size=len(tok), d_model=s["d_model"], encoder_layers=s["layers"],
                        decoder_layers=s["layers"], encoder_attention_heads=s["heads"],
                        decoder_attention_heads=s["heads"], encoder_ffn_dim=s["ffn"], decoder_ffn_dim=s["ffn"],
                        max_position_embeddings=s["positions"], pad_token_id=1, bos_token_id=0, eos_token_id=2,
                        decoder_start_token_id=2, dropout=0.0, attention_dropout=0.0, activation_dropout=0.0,
                        init_std=INIT_STD)
    torch.manual_seed(seed)
    model = BartForConditionalGeneration(config)
    model.generation_config.forced_bos_token_id = 0
    return _save(model, folder)


def build_bert(folder: Path) -> Path:
    from transformers import BertConfig, BertModel

    folder.mkdir(parents=True, exist_ok=True)
    words = sorted({w for s in SENTENCES for w in s.split()})
    (folder / "vocab.txt").write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    config = BertConfig(vocab_size=5 + len(words), hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=64, max_position_embeddings=64)
    return _save(BertModel(config), folder)


def build_gpt2(folder: Path) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel

    v = len(_bpe_tokenizer(folder, "GPT2Tokenizer"))
    config = GPT2Config(vocab_size=v, n_embd=32, n_layer=2, n_head=4, n_positions=64, bos_token_id=0, eos_token_id=2)
    return _save(GPT2LMHeadModel(config), folder)
