"""`align` on every multilingual family's folder as a user's would be: the tokenizer made by its own class
(M2M100Tokenizer, MBartTokenizer, MBart50Tokenizer, NllbTokenizer listing its codes as the hub's configs do, under
`additional_special_tokens`) and written by `save_pretrained` beside a tiny random model; T5 and mT5 without
languages. Each gold line is scored: the language tag a tokenizer puts before the source is no word."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from attention_lens.model.cli import main
from attention_lens.model.engine.loader import load_engine

from harness.models import hf_families
from harness.models.hf_families import _bart_like, _m2m_vocab, _spm

GOLD = ["the cat sat on the mat .\tle chat s' assit sur le tapis .\t0-0 1-1 2-2 2-3 3-4 4-5 5-6 6-7",
        "the black dog barked at the cat .\tle chien noir aboya contre le chat .\t0-0 1-2 2-1 3-3 4-4 5-5 6-6 7-7",
        "a small bird sings .\tun petit oiseau chante .\t0-0 1-1 2-2 3-3 4-4"]
# family -> (source language, target language) as its tokenizer spells them
LANGUAGES = {"m2m100": ("en", "fr"), "mbart": ("en_XX", "fr_XX"), "mbart50": ("en_XX", "fr_XX"),
             "nllb": ("eng_Latn", "fra_Latn")}


def _fast_tokenizer(cls_name: str, spm_folder: Path, **kw):
    """The tokenizer class read from a folder holding only its SentencePiece model (as a user converts one)."""
    import transformers

    (spm_folder / "sentencepiece.bpe.model").write_bytes(_spm(80, "bpe"))
    return getattr(transformers, cls_name).from_pretrained(str(spm_folder), **kw)


def _user_folder(family: str, root: Path) -> Path:
    import transformers as tf

    folder, work = root / family, root / f"{family}-tokenizer"
    work.mkdir(parents=True)
    src, tgt = LANGUAGES[family]
    if family == "m2m100":
        _m2m_vocab(work)
        tok = tf.M2M100Tokenizer(str(work / "vocab.json"), str(work / "sentencepiece.bpe.model"), src_lang=src,
                                 tgt_lang=tgt)
        vocab = max(tok.id_to_lang_token) + 1 + tok.num_madeup_words
    elif family == "nllb":
        from transformers.models.nllb.tokenization_nllb import FAIRSEQ_LANGUAGE_CODES

        tok = _fast_tokenizer("NllbTokenizer", work, src_lang=src, tgt_lang=tgt,
                              additional_special_tokens=list(FAIRSEQ_LANGUAGE_CODES))
    else:
        tok = _fast_tokenizer({"mbart": "MBartTokenizer", "mbart50": "MBart50Tokenizer"}[family], work,
                              src_lang=src, tgt_lang=tgt)
    if family != "m2m100":
        vocab = max(tok.get_vocab().values()) + 1
    tok.save_pretrained(str(folder))
    config_cls, model_cls = ((tf.MBartConfig, tf.MBartForConditionalGeneration) if family.startswith("mbart")
                             else (tf.M2M100Config, tf.M2M100ForConditionalGeneration))
    config = _bart_like(config_cls, vocab, pad_token_id=1, bos_token_id=0, eos_token_id=2, decoder_start_token_id=2,
                        scale_embedding=True)
    torch.manual_seed(0)
    model_cls(config).eval().save_pretrained(str(folder), safe_serialization=True)
    return folder


@pytest.fixture(scope="module")
def gold_tsv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("gold") / "gold.tsv"
    path.write_text("".join(line + "\n" for line in GOLD), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def user_folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("user-saved")
    return {family: _user_folder(family, root) for family in LANGUAGES}


def _align(folder: Path, data: Path, capsys, *languages: str) -> tuple[dict, str]:
    flags = ["--src-lang", languages[0], "--tgt-lang", languages[1]] if languages else []
    assert main(["align", "--model", str(folder), "--data", str(data), *flags, "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    return json.loads(captured.out), captured.err


@pytest.mark.parametrize("family", sorted(LANGUAGES))
def test_every_gold_line_of_a_user_saved_multilingual_model_is_scored(family, user_folders, gold_tsv, capsys):
    result, err = _align(user_folders[family], gold_tsv, capsys, *LANGUAGES[family])
    assert result["skipped"] == [] and result["n_scored"] == len(GOLD), result["skipped"]
    assert 0 <= result["aer"] <= 1 and "no gold links" not in err
    result, _ = _align(user_folders[family], gold_tsv, capsys)  # the tokenizer's own languages
    assert result["skipped"] == [] and result["n_scored"] == len(GOLD)


@pytest.mark.parametrize("family", sorted(LANGUAGES))
def test_every_language_tag_is_a_special_piece(family, user_folders):
    engine = load_engine(str(user_folders[family]))
    tags = {engine.piece(engine._lang_id(code)) for code in engine.languages()}
    assert len(tags) == len(engine.languages()) > 1
    assert tags <= engine.special_pieces()


@pytest.mark.parametrize("family", ["t5", "mt5"])
def test_every_gold_line_of_a_model_without_languages_is_scored(family, gold_tsv, capsys):
    result, _ = _align(hf_families.cached(family), gold_tsv, capsys)
    assert result["skipped"] == [] and result["n_scored"] == len(GOLD)


def test_a_file_whose_every_gold_line_is_skipped_says_so_not_that_it_has_no_gold(tiny_ckpt, tmp_path, capsys):
    data = tmp_path / "misfit.tsv"  # normalised, "cat,sat" is three words
    data.write_text("the cat,sat .\tle chat s' assit .\t0-0 1-1 2-4\n", encoding="utf-8")
    assert main(["align", "--model", str(tiny_ckpt), "--data", str(data), "--json", "--quiet"]) == 0
    captured = capsys.readouterr()
    result = json.loads(captured.out)
    assert result["n_scored"] == 0 and len(result["skipped"]) == 1
    assert "no gold links" not in captured.err and "none could be scored" in captured.err
    assert "1 sentences with gold links" in result["note"]
