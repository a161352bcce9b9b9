"""The Hugging Face engine on tiny random Marian, T5 and BART models built here (harness/models/hf_tiny.py).

What makes the pictures true: the trace arrays are the model's own `output_attentions`; the step-through rows
(the model's own KV cache) equal the teacher-forced pass; beam K=1 is greedy; rows sum to 1; the causal mask
leaves exactly 0 above the diagonal and switching it off really lets the future in; bad folders are refused
with a plain message.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from attention_lens.model.analysis.scores import translate_all
from attention_lens.model.engine import CheckpointError, DecodeOptions, ModelInputError
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.trace import Trace

from harness.models import hf_tiny

FAMILIES = ("marian", "t5", "bart")
SOURCE = "the black dog barked at the cat ."
TARGET = "le chien noir aboya contre le chat ."
SHORT = 12  # decoding steps: random weights rarely stop on their own


@pytest.fixture(scope="session")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    hf_tiny.build_marian(root / "marian")
    hf_tiny.build_t5(root / "t5")
    hf_tiny.build_bart(root / "bart")
    return root


@pytest.fixture(scope="session")
def engines(hf_root):
    return {name: load_engine(hf_root / name) for name in FAMILIES}


@pytest.fixture(params=FAMILIES)
def engine(request, engines):
    return engines[request.param]


def _hf_pass(engine, src_ids, labels):
    """The model's own teacher-forced pass: it shifts the labels itself (shift_tokens_right / _shift_right)."""
    with torch.no_grad():
        return engine.model(input_ids=torch.tensor([src_ids]), labels=torch.tensor([labels]),
                            output_attentions=True)


def _stack(attentions) -> np.ndarray:
    return np.stack([a[0].numpy() for a in attentions])


def _maxdiff(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape, (a.shape, b.shape)
    return float(np.abs(a - b).max())


def _assert_rows(run) -> None:
    for arr in (run.enc_attn, run.dec_attn, run.cross_attn):
        np.testing.assert_allclose(arr.sum(-1), 1.0, atol=1e-5)
    m = run.dec_attn.shape[-1]
    assert np.all(run.dec_attn[..., np.triu(np.ones((m, m), dtype=bool), 1)] == 0.0)  # causal: exactly 0


def _assert_same_run(a, b, tol=1e-5) -> None:
    assert a.dec_in_ids == b.dec_in_ids and a.out_ids == b.out_ids
    for key in ("logits", "enc_attn", "dec_attn", "cross_attn"):
        assert _maxdiff(getattr(a, key), getattr(b, key)) <= tol, key


# ---- opening ---------------------------------------------------------------------------------------------------
def test_opens_each_family(engines):
    expected = {"marian": 64, "t5": 512, "bart": 64}
    for name, e in engines.items():
        assert e.family == name and e.name == name
        assert (e.n_encoder_layers, e.n_decoder_layers, e.n_heads) == (2, 2, 4)
        assert e.max_source_tokens == expected[name]
        assert not e.model.training and not any(p.requires_grad for p in e.model.parameters())
        assert e.model.config._attn_implementation == "eager"
        assert {e.pad_id, e.end_id, e.start_id} <= e.special_ids()
        assert e.supports_causal_switch and e.supports_shift_switch and set(e.switch_notes) == {"causal", "shift"}
    assert "bucket" in engines["t5"].switch_notes["causal"]  # T5's relative positions: the note says why
    assert engines["bart"].forced_first == 0 and 0 in engines["bart"].special_ids()


def test_pieces_are_the_tokenizers_own(engine):
    ids, pieces = engine.encode_source(engine.normalise(" the  cat\x00 sat . "))
    assert pieces == engine.tokenizer.convert_ids_to_tokens(ids)
    assert ids[-1] in engine.eos_ids
    labels = engine.encode_target(TARGET)
    assert labels[-1] in engine.eos_ids
    assert engine.normalise("The Cat\tSAT") == "The Cat SAT"  # no lowercasing: the tokenizer decides


# ---- the arrays are Hugging Face's own ---------------------------------------------------------------------------
def test_teacher_forced_equals_hf_output_attentions(engine):
    src, _ = engine.encode_source(SOURCE)
    labels = engine.encode_target(TARGET)
    ref = _hf_pass(engine, src, labels)
    run = engine.run_teacher_forced(src, labels, causal=True, shift=True)
    assert run.dec_in_ids[0] == engine.start_id and run.dec_in_ids[1:] == labels[:-1]
    assert _maxdiff(run.enc_attn, _stack(ref.encoder_attentions)) <= 1e-6
    assert _maxdiff(run.dec_attn, _stack(ref.decoder_attentions)) <= 1e-6
    assert _maxdiff(run.cross_attn, _stack(ref.cross_attentions)) <= 1e-6
    assert _maxdiff(run.logits, ref.logits[0].numpy()) <= 1e-6
    assert run.logits.shape == (len(labels), engine.vocab_size)
    # ... and so are the Trace's arrays, with tokens beside them.
    trace = engine.trace(SOURCE, target=TARGET)
    assert _maxdiff(trace.cross_attention, _stack(ref.cross_attentions)) <= 1e-6
    assert _maxdiff(trace.decoder_self_attention, _stack(ref.decoder_attentions)) <= 1e-6
    assert _maxdiff(trace.encoder_self_attention, _stack(ref.encoder_attentions)) <= 1e-6
    assert trace.decoder_input_tokens[0] == engine.piece(engine.start_id)
    assert trace.decoder_input_tokens[1:] == trace.target_tokens[:-1]
    assert trace.model["family"] == engine.family
    _assert_rows(run)


def test_step_through_equals_teacher_forced(engine):
    src, _ = engine.encode_source(SOURCE)
    gen = engine.run_generate(src, DecodeOptions(max_len=SHORT))
    tf = engine.run_teacher_forced(src, gen.out_ids, causal=True, shift=True)
    _assert_same_run(gen, tf)
    _assert_rows(gen)
    free = gen.logits.copy()
    free[:, engine.pad_id] = -np.inf  # free-running choices never pick the pad token
    start = len(engine.forced_prefix(DecodeOptions()))  # BART's forced <s>
    assert free.argmax(-1).tolist()[start:] == gen.out_ids[start:]


def test_beam_one_is_greedy_and_every_beam_is_its_own_pass(engine):
    src, _ = engine.encode_source(SOURCE)
    greedy = engine.run_generate(src, DecodeOptions(max_len=SHORT))
    runs, steps = engine.run_beam(src, DecodeOptions(mode="beam", beam_size=1, max_len=SHORT))
    assert len(runs) == 1
    _assert_same_run(runs[0], greedy)
    runs, steps = engine.run_beam(src, DecodeOptions(mode="beam", beam_size=3, max_len=SHORT))
    assert len(runs) == 3 and steps and all(len(s) <= 3 for s in steps)
    for run in runs:  # the cache was reordered right: each beam's rows are what a fresh pass computes
        _assert_same_run(run, engine.run_teacher_forced(src, run.out_ids, causal=True, shift=True))
        _assert_rows(run)
    trace = engine.trace(SOURCE, options=DecodeOptions(mode="beam", beam_size=3, max_len=SHORT))
    assert len(trace.beams) == 3


def test_sampling_is_reproducible(engine):
    src, _ = engine.encode_source(SOURCE)
    opts = dict(mode="sample", temperature=1.5, max_len=SHORT)
    a = engine.run_generate(src, DecodeOptions(seed=7, **opts))
    b = engine.run_generate(src, DecodeOptions(seed=7, **opts))
    assert a.out_ids == b.out_ids and np.array_equal(a.cross_attn, b.cross_attn)
    others = {tuple(engine.run_generate(src, DecodeOptions(seed=s, **opts)).out_ids) for s in range(1, 5)}
    assert len(others | {tuple(a.out_ids)}) > 1
    top1 = engine.run_generate(src, DecodeOptions(seed=3, top_k=1, **opts))
    assert top1.out_ids == engine.run_generate(src, DecodeOptions(max_len=SHORT)).out_ids
    _assert_same_run(a, engine.run_teacher_forced(src, a.out_ids, causal=True, shift=True))


def test_forced_prefix_then_continue(engine):
    src, _ = engine.encode_source(SOURCE)
    forced = tuple(engine.encode_target(TARGET)[:3])
    run = engine.run_generate(src, DecodeOptions(forced=forced, max_len=SHORT))
    assert tuple(run.out_ids[:3]) == forced and run.dec_in_ids[1:4] == list(forced)
    _assert_same_run(run, engine.run_teacher_forced(src, run.out_ids, causal=True, shift=True))


def test_bart_forces_its_first_token(engines):
    e = engines["bart"]
    trace = e.trace(SOURCE, options=DecodeOptions(max_len=SHORT))
    assert trace.decoder_input_tokens[0] == "</s>" and trace.target_tokens[0] == "<s>"


def test_translate_all_is_the_same_greedy(engine):
    sources = [SOURCE, "a small bird sings .", "my sister reads a long book every night ."]
    out = translate_all(engine, sources, max_len=SHORT)
    for text, hyp in zip(sources, out):
        run = engine.run_generate(engine.encode_source(engine.normalise(text))[0], DecodeOptions(max_len=SHORT))
        assert hyp == engine.detokenize(run.out_ids)


# ---- the switches ----------------------------------------------------------------------------------------------
def test_causal_switch_really_removes_causality(engine):
    src, _ = engine.encode_source(SOURCE)
    labels = engine.encode_target(TARGET)
    other = [*labels[:3], *reversed(labels[3:-1]), labels[-1]]
    assert other != labels
    causal = engine.run_teacher_forced(src, labels, causal=True, shift=True)
    leaky = engine.run_teacher_forced(src, labels, causal=False, shift=True)
    m = len(labels)
    upper = np.triu(np.ones((m, m), dtype=bool), 1)
    assert np.all(causal.dec_attn[..., upper] == 0.0)
    assert np.all(leaky.dec_attn[..., upper].sum(-1) > 0)  # every layer and head looks ahead
    np.testing.assert_allclose(leaky.dec_attn.sum(-1), 1.0, atol=1e-5)
    # The probe's view: with the mask, changing later labels moves no earlier logit; without it, it does.
    causal2 = engine.run_teacher_forced(src, other, causal=True, shift=True)
    leaky2 = engine.run_teacher_forced(src, other, causal=False, shift=True)
    assert _maxdiff(causal.logits[:4], causal2.logits[:4]) <= 1e-6
    assert _maxdiff(leaky.logits[:4], leaky2.logits[:4]) > 1e-3
    trace = engine.trace(SOURCE, target=TARGET, options=DecodeOptions(causal=False))
    assert trace.options.causal is False and trace.decoder_mask().all()
    # Switching is an argument: the next causal run is as before (nothing in the model changed).
    _assert_same_run(causal, engine.run_teacher_forced(src, labels, causal=True, shift=True), tol=0.0)


def test_shift_off_reads_the_labels(engine):
    src, _ = engine.encode_source(SOURCE)
    labels = engine.encode_target(TARGET)
    run = engine.run_teacher_forced(src, labels, causal=True, shift=False)
    assert run.dec_in_ids == labels and run.out_ids == labels
    with torch.no_grad():
        ref = engine.model(input_ids=torch.tensor([src]), decoder_input_ids=torch.tensor([labels]),
                           output_attentions=True)
    assert _maxdiff(run.dec_attn, _stack(ref.decoder_attentions)) <= 1e-6
    trace = engine.trace(SOURCE, target=TARGET, options=DecodeOptions(shift=False))
    assert trace.decoder_input_tokens == trace.target_tokens


def test_disabled_causal_switch_says_why(engines):
    import copy

    e = copy.copy(engines["marian"])  # a shallow copy shares the model; only the flags differ
    e.supports_causal_switch = False
    e.switch_notes = {**e.switch_notes, "causal": "this family ignores custom masks"}
    src, _ = e.encode_source(SOURCE)
    with pytest.raises(ModelInputError, match="ignores custom masks"):
        e.run_teacher_forced(src, e.encode_target(TARGET), causal=False, shift=True)


# ---- input limits ----------------------------------------------------------------------------------------------
def test_long_input_is_truncated_with_a_warning(engines):
    e = engines["marian"]
    long = " ".join(["the black dog barked at the cat ."] * 20)
    trace = e.trace(long, options=DecodeOptions(max_len=4))
    assert trace.n == e.max_source_tokens and trace.source_tokens[-1] == "</s>"
    assert any("truncated" in w for w in trace.warnings)
    with pytest.raises(ModelInputError):
        e.trace(" \x00 ")


# ---- refusals --------------------------------------------------------------------------------------------------
@pytest.fixture(scope="session")
def bad_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad")
    hf_tiny.build_bert(root / "bert")
    hf_tiny.build_gpt2(root / "gpt2")
    hf_tiny.build_marian(root / "notok", tokenizer=False)
    (root / "empty").mkdir()
    (root / "vision").mkdir()
    (root / "vision" / "config.json").write_text(json.dumps({"model_type": "vit", "hidden_size": 32}))
    (root / "unknown").mkdir()
    (root / "unknown" / "config.json").write_text(json.dumps({"model_type": "no-such-family"}))
    return root


@pytest.mark.parametrize("folder, words", [
    ("bert", "encoder-only"), ("gpt2", "decoder-only"), ("notok", "no tokenizer files"),
    ("empty", "empty folder"), ("vision", "not a text-to-text encoder-decoder"), ("unknown", "cannot be read"),
])
def test_refuses_with_a_plain_message(bad_root, folder, words):
    with pytest.raises(CheckpointError, match=words):
        load_engine(bad_root / folder)


def test_hub_ids_need_permission():
    from attention_lens.model.hf.engine import HFEngine

    with pytest.raises(CheckpointError, match="no such model folder"):
        load_engine("Helsinki-NLP/opus-mt-en-de")
    with pytest.raises(CheckpointError, match="hub"):
        HFEngine.load("Helsinki-NLP/opus-mt-en-de")


# ---- command line ----------------------------------------------------------------------------------------------
def test_cli_trace_on_a_marian_folder(hf_root, tmp_path, capsys):
    from attention_lens.model.cli import main

    out = tmp_path / "t.json"
    assert main(["trace", "--model", str(hf_root / "marian"), "--text", SOURCE, "--max-len", "6",
                 "--out", str(out)]) == 0
    trace = Trace.load(out)
    assert trace.model["family"] == "marian" and trace.source_tokens[-1] == "</s>"
    assert trace.decoder_input_tokens[0] == "<pad>" and trace.m <= 6
    npz = tmp_path / "t.npz"
    assert main(["trace", "--model", str(hf_root / "t5"), "--text", SOURCE, "--target", TARGET,
                 "--no-causal-mask", "--out", str(npz)]) == 0
    assert Trace.load(npz).options.causal is False


def test_cli_refusal_is_one_line(bad_root, capsys):
    from attention_lens.model.cli import main

    assert main(["trace", "--model", str(bad_root / "gpt2"), "--text", "x", "--out", "x.json"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "decoder-only" in err and "Traceback" not in err


def test_probe_sees_no_leak_with_the_mask_and_one_without(engine):
    from attention_lens.model.analysis.probe import probe

    healthy = probe(engine, SOURCE, TARGET)
    assert not healthy.leaks and healthy.max_past_logit_change == 0.0 and healthy.future_attention_mass == 0.0
    broken = probe(engine, SOURCE, TARGET, causal=False)
    assert broken.leaks and broken.future_attention_mass > 0
