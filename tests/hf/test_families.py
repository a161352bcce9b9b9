"""The eight Hugging Face families people debug, each a tiny random model with its own real tokenizer class
(harness/models/hf_families: Marian, T5, mT5, BART, mBART-50, M2M-100, NLLB on M2M-100 weights, Pegasus).

Per family: the traced attention is the model's own `output_attentions` (<= 1e-5); the cached step-through equals
teacher forcing on the same tokens; our greedy tokens equal the model's own `generate` (greedy, the same forced
first token); every switch, reading and option either works or is refused in one sentence that names the family.
The multilingual ones (mBART-50, M2M-100, NLLB) take a source and target language; the others refuse one.
docs/your-model.md's family table names these tests.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch
from attention_lens.model.engine import DecodeOptions, ModelInputError
from attention_lens.model.engine.bugs import BUGS
from attention_lens.model.engine.loader import load_engine

from harness.models import hf_families
from tests.fixtures.checkpoints import ROOT

SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."
SHORT = 8  # decoding steps: random weights rarely stop on their own
TOL = 1e-5
# A second language pair per multilingual family (source, target), other than the tokenizer's defaults.
OTHER = {"mbart50": ("fr_XX", "de_DE"), "m2m100": ("fr", "de"), "nllb": ("fra_Latn", "deu_Latn")}


@pytest.fixture(scope="session")
def family_engines():
    return {name: load_engine(hf_families.cached(name)) for name in hf_families.FAMILIES}


@pytest.fixture(params=hf_families.FAMILIES)
def family(request, family_engines):
    return request.param, family_engines[request.param]


def _stack(attentions) -> np.ndarray:
    return np.stack([a[0].float().numpy() for a in attentions])


def _maxdiff(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max())


def _languages(name: str, engine):
    """The engine bound to a non-default language pair (multilingual families), else the engine itself."""
    return engine.with_languages(*OTHER[name]) if name in OTHER else engine


def test_traced_attention_is_the_models_own(family):
    name, base = family
    for engine in {base, _languages(name, base)}:
        src, _ = engine.encode_source(SOURCE)
        labels = engine.encode_target(TARGET)
        with torch.no_grad():
            ref = engine.model(input_ids=torch.tensor([src]), labels=torch.tensor([labels]), output_attentions=True)
        trace = engine.trace(SOURCE, target=TARGET)
        assert _maxdiff(trace.encoder_self_attention, _stack(ref.encoder_attentions)) <= TOL
        assert _maxdiff(trace.decoder_self_attention, _stack(ref.decoder_attentions)) <= TOL
        assert _maxdiff(trace.cross_attention, _stack(ref.cross_attentions)) <= TOL
        assert trace.decoder_input_tokens[0] == engine.piece(engine.start_id)


def test_cached_decoding_equals_teacher_forcing(family):
    name, base = family
    for engine in {base, _languages(name, base)}:
        src, _ = engine.encode_source(SOURCE)
        gen = engine.run_generate(src, DecodeOptions(max_len=SHORT))
        tf = engine.run_teacher_forced(src, gen.out_ids, causal=True, shift=True)
        assert gen.dec_in_ids == tf.dec_in_ids and gen.out_ids == tf.out_ids
        for key in ("logits", "enc_attn", "dec_attn", "cross_attn"):
            assert _maxdiff(getattr(gen, key), getattr(tf, key)) <= TOL, key


def test_greedy_equals_the_models_own_generate(family):
    name, base = family
    for engine in {base, _languages(name, base)}:
        src, _ = engine.encode_source(SOURCE)
        ours = engine.run_generate(src, DecodeOptions(max_len=SHORT)).out_ids
        kwargs = {}
        if engine.forced_first is not None:
            kwargs["forced_bos_token_id"] = int(engine.forced_first)
            assert ours[0] == int(engine.forced_first)
        if engine.pad_id is not None and engine.pad_id not in engine.eos_ids:
            kwargs["bad_words_ids"] = [[int(engine.pad_id)]]  # as our decoding: never the padding token
        with torch.no_grad():
            theirs = engine.model.generate(
                input_ids=torch.tensor([src]), attention_mask=torch.ones(1, len(src), dtype=torch.long),
                max_new_tokens=SHORT, do_sample=False, num_beams=1, decoder_start_token_id=engine.start_id,
                eos_token_id=sorted(engine.eos_ids), pad_token_id=engine.pad_id, min_length=0,
                no_repeat_ngram_size=0, repetition_penalty=1.0, forced_eos_token_id=None, **kwargs)[0].tolist()
        assert theirs[0] == engine.start_id
        assert theirs[1: 1 + len(ours)] == ours, (name, theirs, ours)


def _one_sentence(exc: Exception, family: str) -> None:
    text = str(exc)
    assert "\n" not in text and family in text, text


def test_every_switch_reading_and_option_works_or_is_refused_naming_the_family(family):
    name, engine = family
    fam = engine.family
    # the causal and shift switches (teacher forcing)
    for causal, shift in ((False, True), (True, False)):
        options = DecodeOptions(mode="teacher_forced", causal=causal, shift=shift)
        if (not causal and not engine.supports_causal_switch) or (not shift and not engine.supports_shift_switch):
            with pytest.raises(ModelInputError) as err:
                engine.trace(SOURCE, target=TARGET, options=options)
            _one_sentence(err.value, fam)
        else:
            trace = engine.trace(SOURCE, target=TARGET, options=options)
            assert trace.options.causal is causal and trace.options.shift is shift
    # beam search, sampling, ablation, a forced prefix
    beam = engine.trace(SOURCE, options=DecodeOptions(mode="beam", beam_size=2, max_len=SHORT))
    assert len(beam.beams) == 2
    sample = engine.trace(SOURCE, options=DecodeOptions(mode="sample", seed=3, top_k=5, max_len=SHORT))
    assert sample.m >= 1
    off = engine.trace(SOURCE, target=TARGET, options=DecodeOptions(ablate=("cross:1:1",)))
    assert np.all(off.cross_attention[0, 0] >= 0) and off.options.ablate == ("cross:1:1",)
    # the readings: contributions, logit lens, gradient saliency
    for reading in ("contributions", "lens", "saliency"):
        options = DecodeOptions(mode="teacher_forced", **{reading: True})
        try:
            trace = engine.trace(SOURCE, target=TARGET, options=options)
        except ModelInputError as exc:
            _one_sentence(exc, fam)
        else:
            assert getattr(trace, reading) is not None
    # the three bug switches: computed by our own models only, refused here naming the family
    for bug in BUGS:
        with pytest.raises(ModelInputError) as err:
            engine.trace(SOURCE, options=DecodeOptions(**{bug: True}))
        _one_sentence(err.value, fam)
        assert str(err.value).startswith("Not possible for this model family")
    # languages: chosen on a multilingual model, refused on the others
    if name in OTHER:
        src, tgt = OTHER[name]
        trace = engine.trace(SOURCE, options=DecodeOptions(src_lang=src, tgt_lang=tgt, max_len=SHORT))
        assert (trace.options.src_lang, trace.options.tgt_lang) == (src, tgt)
        with pytest.raises(ModelInputError) as err:
            engine.trace(SOURCE, options=DecodeOptions(tgt_lang="xx_nope"))
        _one_sentence(err.value, fam)
    else:
        assert engine.languages() == ()
        with pytest.raises(ModelInputError) as err:
            engine.trace(SOURCE, options=DecodeOptions(tgt_lang="fr"))
        _one_sentence(err.value, fam)


@pytest.mark.parametrize("name", sorted(OTHER))
def test_languages_choose_the_source_token_and_the_forced_first_token(name, family_engines):
    engine = family_engines[name]
    src, tgt = OTHER[name]
    codes = engine.languages()
    assert src in codes and tgt in codes and engine.src_lang in codes and engine.tgt_lang in codes
    trace = engine.trace(SOURCE, options=DecodeOptions(src_lang=src, tgt_lang=tgt, max_len=SHORT))
    bound = engine.with_languages(src, tgt)
    assert bound.model is engine.model  # the weights are shared, the loaded engine is unchanged
    assert engine.src_lang != src and engine.tgt_lang != tgt
    lang_tok = bound.piece(bound._lang_id(src))
    assert lang_tok in trace.source_tokens  # the source language's token is in the encoder input
    assert trace.target_tokens[0] == bound.piece(bound._lang_id(tgt))  # the target language forced first
    default = engine.trace(SOURCE, options=DecodeOptions(max_len=SHORT))
    assert (default.options.src_lang, default.options.tgt_lang) == (engine.src_lang, engine.tgt_lang)
    assert default.target_tokens[0] == engine.piece(engine._lang_id(engine.tgt_lang))
    again = type(trace).from_dict(__import__("json").loads(trace.to_json()))
    assert (again.options.src_lang, again.options.tgt_lang) == (src, tgt)


def test_cli_languages_reach_the_trace_and_a_model_without_languages_is_one_sentence(tmp_path):
    nllb, marian = hf_families.cached("nllb"), hf_families.cached("marian")
    out = tmp_path / "t.json"
    run = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(nllb), "--text", SOURCE,
                          "--src-lang", "fra_Latn", "--tgt-lang", "deu_Latn", "--max-len", "4", "--out", str(out)],
                         capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert run.returncode == 0, run.stderr
    record = __import__("json").loads(out.read_text())
    assert record["options"]["src_lang"] == "fra_Latn" and record["options"]["tgt_lang"] == "deu_Latn"
    assert record["target_tokens"][0] == "deu_Latn" and record["source_tokens"][0] == "fra_Latn"
    run = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(marian), "--text", SOURCE,
                          "--tgt-lang", "fr", "--out", str(out)], capture_output=True, text=True, cwd=ROOT,
                         timeout=300)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and "marian model is not multilingual" in lines[0], run.stderr


def test_pieces_of_ids_past_the_tokenizer(family_engines):
    """M2M-100's language ids lie past len(tokenizer) and read as their tokens; an id a model embeds but its
    tokenizer lacks (Marian raised sentencepiece's IndexError) reads as <id N>."""
    m2m = family_engines["m2m100"]
    assert m2m._lang_id("fr") >= len(m2m.tokenizer) and m2m.piece(m2m._lang_id("fr")) == "__fr__"
    marian = family_engines["marian"]
    past = len(marian.tokenizer) + 5
    marian_vocab = marian.vocab_size
    try:
        marian.vocab_size = past + 1  # as a model whose embedding has more rows than its tokenizer
        assert marian.piece(past) == f"<id {past}>"
    finally:
        marian.vocab_size = marian_vocab
