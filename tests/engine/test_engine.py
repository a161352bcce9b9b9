"""The invariants that make the pictures true (docs/formats.md)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from attention_lens.model.builtin.batch import teacher_forced_batch
from attention_lens.model.builtin.checkpoint import load_checkpoint
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.engine import CheckpointError, DecodeOptions, ModelInputError
from attention_lens.model.engine.loader import load_engine
from attention_lens.model.engine.masks import causal_mask, decoder_self_mask, padding_mask
from attention_lens.model.engine.tensors import pad_batch
from attention_lens.model.engine.trace import KINDS, Trace

from harness.models.tiny import build_tiny_checkpoint
from tests.fixtures.checkpoints import ROOT

TEXT = "the black cat sat on the mat ."
TARGET = "le chat noir s' assit sur le tapis ."


def all_traces(engine: BuiltinEngine) -> list[Trace]:
    return [
        engine.trace(TEXT, options=DecodeOptions(mode="greedy", max_len=12)),
        engine.trace(TEXT, options=DecodeOptions(mode="sample", max_len=12, seed=3, temperature=1.5)),
        engine.trace(TEXT, options=DecodeOptions(mode="beam", beam_size=3, max_len=12)),
        engine.trace(TEXT, target=TARGET),
        engine.trace(TEXT, target=TARGET, options=DecodeOptions(mode="teacher_forced", causal=False)),
        engine.trace(TEXT, target=TARGET, options=DecodeOptions(mode="teacher_forced", shift=False)),
    ]


def test_masks_are_boolean_and_named():
    assert causal_mask(3).squeeze().tolist() == [[True, False, False], [True, True, False], [True, True, True]]
    keep = torch.tensor([[True, True, False]])
    assert padding_mask(keep).shape == (1, 1, 1, 3)
    combined = decoder_self_mask(keep, causal=True)[0, 0]
    assert combined.tolist() == [[True, False, False], [True, True, False], [True, True, False]]


def test_every_attention_row_sums_to_one(tiny_engine):
    for trace in all_traces(tiny_engine):
        for t in (trace, *trace.beams):
            for kind in KINDS:
                a = getattr(t, kind)
                assert a.shape[0] >= 2 and a.shape[1] == 4
                np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-5, err_msg=kind)


def test_causal_mask_zeroes_the_upper_triangle(tiny_engine):
    on = tiny_engine.trace(TEXT, target=TARGET)
    off = tiny_engine.trace(TEXT, target=TARGET, options=DecodeOptions(mode="teacher_forced", causal=False))
    upper = np.triu(np.ones((on.m, on.m), dtype=bool), k=1)
    assert (on.decoder_self_attention[..., upper] == 0.0).all()
    assert (off.decoder_self_attention[..., upper] > 0.0).any()
    greedy = tiny_engine.trace(TEXT, options=DecodeOptions(max_len=10))
    assert (greedy.decoder_self_attention[..., np.triu(np.ones((greedy.m, greedy.m), bool), 1)] == 0).all()
    assert off.decoder_mask()[0, 1] and not on.decoder_mask()[0, 1] and on.decoder_mask()[1, 0]


def test_cross_attention_is_rectangular_rows_are_decoder_positions(tiny_engine):
    t = tiny_engine.trace(TEXT, target=TARGET)
    assert t.n != t.m
    assert t.cross_attention.shape == (2, 4, t.m, t.n)
    assert t.encoder_self_attention.shape == (2, 4, t.n, t.n)
    assert t.decoder_self_attention.shape == (2, 4, t.m, t.m)
    assert t.source_tokens[-1] == "</s>" and t.target_tokens[-1] == "</s>"


def test_shift_on_reads_previous_token_shift_off_reads_its_own(tiny_engine):
    on = tiny_engine.trace(TEXT, target=TARGET)
    assert on.decoder_input_tokens[0] == "<s>"
    assert all(on.decoder_input_tokens[t] == on.target_tokens[t - 1] for t in range(1, on.m))
    off = tiny_engine.trace(TEXT, target=TARGET, options=DecodeOptions(mode="teacher_forced", shift=False))
    assert off.decoder_input_tokens == off.target_tokens
    greedy = tiny_engine.trace(TEXT, options=DecodeOptions(max_len=10))
    assert all(greedy.decoder_input_tokens[t] == greedy.target_tokens[t - 1] for t in range(1, greedy.m))


def test_cached_steps_equal_teacher_forced_full_pass(tiny_engine):
    src = tiny_engine.prepare_source(TEXT)[1]
    for opts in (DecodeOptions(max_len=12), DecodeOptions(mode="sample", seed=1, max_len=12)):
        run = tiny_engine.run_generate(src, opts)
        full = tiny_engine.run_teacher_forced(src, run.out_ids, causal=True, shift=True)
        assert run.dec_in_ids == full.dec_in_ids
        for a, b in ((run.logits, full.logits), (run.enc_attn, full.enc_attn), (run.dec_attn, full.dec_attn),
                     (run.cross_attn, full.cross_attn)):
            assert a.shape == b.shape
            assert np.abs(a - b).max() <= 1e-5


def test_causality_future_targets_do_not_move_past_logits(tiny_engine):
    src = tiny_engine.prepare_source(TEXT)[1]
    labels = tiny_engine.encode_target(TARGET)
    t = 3
    v = tiny_engine.cfg.tgt_vocab_size
    changed = labels[: t + 1] + [(i + 7) % (v - 4) + 4 for i in labels[t + 1:]]
    assert changed != labels
    for causal, expect_leak in ((True, False), (False, True)):
        a = tiny_engine.run_teacher_forced(src, labels, causal, True).logits
        b = tiny_engine.run_teacher_forced(src, changed, causal, True).logits
        # With the shift, rows <= t+1 read only labels <= t; row t+1 reads label t, unchanged.
        past = np.abs(a[: t + 1] - b[: t + 1]).max()
        if expect_leak:
            assert past > 1e-4
        else:
            assert past <= 1e-6


def test_padded_batch_equals_unbatched(tiny_engine):
    model = tiny_engine.model
    short = tiny_engine.prepare_source("the cat sat .")[1]
    long = tiny_engine.prepare_source(TEXT)[1]
    lab_s, lab_l = tiny_engine.encode_target("le chat s' assit ."), tiny_engine.encode_target(TARGET)
    batch = teacher_forced_batch(model, [short, long], [lab_s, lab_l], True, True)
    alone = teacher_forced_batch(model, [short], [lab_s], True, True)[0]
    for a, b in ((batch[0].enc_attn, alone.enc_attn), (batch[0].cross_attn, alone.cross_attn),
                 (batch[0].dec_attn, alone.dec_attn), (batch[0].logits, alone.logits)):
        assert np.abs(a - b).max() <= 1e-5
    # Padding keys get zero weight: run the raw model and look at the padded columns.
    src, keep = pad_batch([short, long], 0)
    enc = model.encode(src, keep)
    for w in enc.attentions:
        assert (w[0, :, :, len(short):] == 0).all()
    gen = tiny_engine.decode_batch([short, long], DecodeOptions(max_len=8))
    gen_alone = tiny_engine.decode_batch([short], DecodeOptions(max_len=8))[0]
    assert gen[0].out_ids == gen_alone.out_ids
    assert np.abs(gen[0].cross_attn - gen_alone.cross_attn).max() <= 1e-5


def test_save_load_gives_identical_logits(tmp_path):
    folder = build_tiny_checkpoint(tmp_path / "a", seed=5)
    e1 = BuiltinEngine.load(folder)
    ck = e1.ckpt
    from attention_lens.model.builtin.checkpoint import save_checkpoint

    save_checkpoint(tmp_path / "b", ck.model, ck.source_tokenizer, ck.target_tokenizer, ck.card)
    e2 = BuiltinEngine.load(tmp_path / "b")
    src = e1.prepare_source(TEXT)[1]
    lab = e1.encode_target(TARGET)
    a = e1.run_teacher_forced(src, lab, True, True).logits
    b = e2.run_teacher_forced(src, lab, True, True).logits
    assert np.array_equal(a, b)


def test_pickle_checkpoint_is_refused_and_nothing_runs(tmp_path):
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (Path.touch, (marker,))

    folder = tmp_path / "pickled"
    folder.mkdir()
    torch.save({"x": Evil()}, folder / "pytorch_model.bin", _use_new_zipfile_serialization=True)
    (folder / "config.json").write_text(json.dumps({"src_vocab_size": 10}))
    for loader in (load_checkpoint, load_engine):
        with pytest.raises(CheckpointError, match="pickle"):
            loader(folder)
    assert not marker.exists()


def test_corrupt_and_mismatched_checkpoints_are_refused(tmp_path):
    folder = build_tiny_checkpoint(tmp_path / "c")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match="corrupt or truncated"):
        load_engine(folder)
    folder = build_tiny_checkpoint(tmp_path / "d")
    cfg = json.loads((folder / "config.json").read_text())
    cfg["d_ff"] = 128
    (folder / "config.json").write_text(json.dumps(cfg))
    with pytest.raises(CheckpointError, match="shape"):
        load_engine(folder)
    with pytest.raises(CheckpointError, match="empty"):
        (tmp_path / "empty").mkdir()
        load_engine(tmp_path / "empty")


def test_trace_json_and_npz_round_trip(tiny_engine, tmp_path):
    for i, trace in enumerate(all_traces(tiny_engine)):
        trace.save(tmp_path / f"t{i}.json")
        trace.save(tmp_path / f"t{i}.npz")
        a, b = Trace.load(tmp_path / f"t{i}.json"), Trace.load(tmp_path / f"t{i}.npz")
        for other in (a, b):
            assert other.to_dict() == trace.to_dict()
            for kind in KINDS:
                assert np.array_equal(getattr(other, kind), getattr(trace, kind))


def test_trace_reader_says_what_is_wrong(tiny_engine):
    d = tiny_engine.trace(TEXT, target=TARGET).to_dict()
    d["target_tokens"] = d["target_tokens"][:-1]
    with pytest.raises(ValueError, match="decoder input tokens"):
        Trace.from_dict(d)


def test_beam_of_one_is_greedy_and_sampling_is_reproducible(tiny_engine):
    greedy = tiny_engine.trace(TEXT, options=DecodeOptions(max_len=12))
    beam = tiny_engine.trace(TEXT, options=DecodeOptions(mode="beam", beam_size=1, max_len=12))
    assert beam.target_tokens == greedy.target_tokens
    assert np.abs(beam.cross_attention - greedy.cross_attention).max() <= 1e-6
    s1 = tiny_engine.trace(TEXT, options=DecodeOptions(mode="sample", seed=11, temperature=2.0, max_len=12))
    s2 = tiny_engine.trace(TEXT, options=DecodeOptions(mode="sample", seed=11, temperature=2.0, max_len=12))
    s3 = tiny_engine.trace(TEXT, options=DecodeOptions(mode="sample", seed=12, temperature=2.0, max_len=12))
    assert s1.to_dict() == s2.to_dict()
    assert s1.target_tokens != s3.target_tokens or s1.to_dict() != s3.to_dict()


def test_beam_hypotheses_carry_their_own_attention(tiny_engine):
    t = tiny_engine.trace(TEXT, options=DecodeOptions(mode="beam", beam_size=3, max_len=10))
    assert len(t.beams) == 3 and t.beam_steps
    src = tiny_engine.prepare_source(TEXT)[1]
    for beam in t.beams:
        ids = [s.id for s in beam.steps]
        full = tiny_engine.run_teacher_forced(src, ids, True, True)
        assert np.abs(full.cross_attn - beam.cross_attention).max() <= 1e-5
        assert np.abs(full.dec_attn - beam.decoder_self_attention).max() <= 1e-5


def test_forced_prefix_continues_from_the_chosen_tokens(tiny_engine):
    base = tiny_engine.trace(TEXT, options=DecodeOptions(max_len=10))
    alt = base.steps[0].top_k[1][0]
    alt_id = tiny_engine.ckpt.target_tokenizer.sp.piece_to_id(alt)
    forced = tiny_engine.trace(TEXT, options=DecodeOptions(max_len=10, forced=(alt_id,)))
    assert forced.target_tokens[0] == alt
    assert forced.forced_tokens == (alt,)


def test_empty_input_is_a_clear_error(tiny_engine):
    with pytest.raises(ModelInputError, match="empty"):
        tiny_engine.trace("   \n\t ")


def test_cli_trace_writes_the_design_schema(tiny_ckpt, tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(tiny_ckpt), "--text", TEXT,
                           "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    d = json.loads(out.read_text())
    for key in ("version", "model", "options", "source_tokens", "decoder_input_tokens", "target_tokens",
                "encoder_self_attention", "decoder_self_attention", "cross_attention", "steps"):
        assert key in d
    assert set(d["model"]) >= {"name", "family", "encoder_layers", "decoder_layers", "heads"}
    assert d["options"]["mode"] == "greedy" and d["options"]["causal"] is True
    assert set(d["steps"][0]) >= {"token", "id", "prob", "top_k"}
    m, n = len(d["target_tokens"]), len(d["source_tokens"])
    assert np.asarray(d["cross_attention"]).shape == (2, 4, m, n)
    npz = tmp_path / "t.npz"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(tiny_ckpt), "--text", TEXT,
                           "--target", TARGET, "--no-causal-mask", "--out", str(npz)], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert Trace.load(npz).options.causal is False
    bad = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(tmp_path), "--text", TEXT,
                          "--out", str(out)], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "error:" in bad.stderr and "Traceback" not in bad.stderr


def test_kv_cache_grown_in_place_never_overwrites_a_branch():
    """The cache's keys grow in a buffer with spare room (model/builtin/transformer.py KVStore); extending an older
    cache again (a branch) must copy, leaving the newer cache's rows as they were."""
    from attention_lens.model.builtin.transformer import LayerCache

    torch.manual_seed(0)
    rows = [torch.randn(1, 2, 1, 4) for _ in range(4)]
    cross = torch.zeros(1, 2, 3, 4)
    a = LayerCache(None, None, cross, cross).extend(rows[0], rows[0]).extend(rows[1], rows[1])
    b = a.extend(rows[2], rows[2])
    c = a.extend(rows[3], rows[3])  # a branch from a: b's third row must survive
    assert torch.equal(b.self_k, torch.cat(rows[:3], dim=2))
    assert torch.equal(c.self_k, torch.cat([*rows[:2], rows[3]], dim=2))
    assert torch.equal(b.extend(rows[0], rows[0]).self_v, torch.cat([*rows[:3], rows[0]], dim=2))
