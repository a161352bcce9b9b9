"""DecodeOptions is the one form of a run's options: the app's cache key as it is, kept typed in the Trace, and
written to disk as docs/formats.md's flat `options` object."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest
from attention_lens.model.engine import DecodeOptions, Trace

from harness.models.tiny import SOURCES, TARGETS


def test_options_are_a_cache_key_as_they_are():
    a = DecodeOptions(mode="teacher_forced", causal=False, ablate=("cross:1:1",))
    assert hash(a) == hash(replace(a)) and {a: 1}[DecodeOptions(mode="teacher_forced", causal=False,
                                                                ablate=("cross:1:1",))] == 1
    assert a != replace(a, causal=True)


@pytest.mark.parametrize("mode", ["greedy", "beam", "sample"])
def test_the_causal_switch_only_matters_in_teacher_forcing(mode):
    assert DecodeOptions(mode=mode, causal=False).causal_mask is True
    assert DecodeOptions(mode="teacher_forced", causal=False).causal_mask is False
    assert DecodeOptions(mode="teacher_forced").causal_mask is True


def test_the_trace_keeps_the_options_typed_and_writes_them_flat(tiny_engine, tmp_path):
    options = DecodeOptions(mode="teacher_forced", causal=False, ablate=("cross:1:1",))
    trace = tiny_engine.trace(SOURCES[0], target=TARGETS[0], options=options)
    assert trace.options == options and trace.normalised_source and trace.decoder_mask().all()
    written = json.loads(trace.to_json())["options"]
    assert written["causal"] is False and written["ablate"] == ["cross:1:1"] and "contributions" not in written
    assert {"forced", "normalised_source", "warnings", "score"} <= set(written)
    for suffix in (".json", ".npz"):
        trace.save(tmp_path / f"t{suffix}")
        back = Trace.load(tmp_path / f"t{suffix}")
        assert back.options == options and back.to_dict()["options"] == written


def test_a_free_run_records_its_forced_prefix_as_pieces(tiny_engine):
    plain = tiny_engine.trace(SOURCES[0], options=DecodeOptions(max_len=4))
    forced = tiny_engine.trace(SOURCES[0], options=DecodeOptions(max_len=4, forced=(plain.steps[0].id,)))
    assert forced.options.forced == (plain.steps[0].id,) and forced.forced_tokens == (plain.steps[0].token,)
    back = Trace.from_dict(forced.to_dict())
    assert back.forced_tokens == forced.forced_tokens and back.options.forced == ()  # a file holds pieces only


@pytest.mark.parametrize("bad, says", [({"causal": "no"}, "options.causal"), ({"max_len": 1.5}, "options.max_len"),
                                       ({"temperature": True}, "options.temperature"),
                                       ({"ablate": "cross:1:1"}, "options.ablate"), ({"nonsense": 1}, "unknown"),
                                       ({"mode": "dream"}, "mode must be one of")])
def test_a_file_with_bad_options_is_refused_in_one_line(tiny_engine, bad, says):
    d = tiny_engine.trace(SOURCES[0], options=DecodeOptions(max_len=3)).to_dict()
    d["options"] |= bad
    with pytest.raises(ValueError, match=says) as err:
        Trace.from_dict(d)
    assert str(err.value).startswith("trace: malformed") and "\n" not in str(err.value)


def test_the_app_caches_one_run_per_options_value(tiny_ckpt, monkeypatch):
    import streamlit as st
    from attention_lens.app import registry, services

    monkeypatch.setenv(registry.ENV_DIRS, str(tiny_ckpt))
    st.cache_resource.clear()
    first = services.get_trace(tiny_ckpt.name, SOURCES[0], None, DecodeOptions(max_len=3))
    assert services.get_trace(tiny_ckpt.name, SOURCES[0], None, DecodeOptions(max_len=3)) is first
    assert services.get_trace(tiny_ckpt.name, SOURCES[0], None, DecodeOptions(max_len=2)) is not first
    st.cache_resource.clear()
