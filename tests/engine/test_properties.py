"""Property-based tests (hypothesis) for the three readers of untrusted input: the text normaliser, the
tokenizer wrapper and the Trace readers. Whatever comes in, the answer is a value or a ValueError."""

from __future__ import annotations

import contextlib
import io
import json
import unicodedata
import zipfile

import numpy as np
import pytest
from attention_lens.model.builtin.normalise import normalise
from attention_lens.model.builtin.tokenizer import train_tokenizer
from attention_lens.model.engine.options import DecodeOptions
from attention_lens.model.engine.text import MAX_INPUT_CHARS, clean
from attention_lens.model.engine.trace import KINDS, Step, Trace
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# Every code point, surrogates and controls included; and a text strategy biased to the awkward ones.
ANY_CHAR = st.characters(codec=None, exclude_categories=())
AWKWARD = st.sampled_from(list("\x00\x07\x1b\x7f\u200b\u200e\u202e\ufeff\ud800\udfff\u0301\u3000\n\t\r .,!?'’\"«»"
                               "<>&;:()lLqujQ") + ["qu'", "jusqu'", "l’", "Hund", "🐱", "👍🏽", "ß", "İ", "ﬁ", "שלום"])
TEXT = st.lists(st.one_of(ANY_CHAR, AWKWARD), max_size=60).map("".join)
KNOWN = frozenset({"Hund", "Katze", "hund", "Bank", "İ"})
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ---- the text normaliser --------------------------------------------------------------------------------------
@FAST
@given(TEXT, st.sampled_from([frozenset(), KNOWN]))
def test_normalise_is_total_idempotent_and_clean(text, known):
    out = normalise(text, known)
    assert isinstance(out, str)
    assert normalise(out, known) == out  # idempotent on its own output
    assert not any(unicodedata.category(c)[0] == "C" for c in out)  # no control / format / surrogate chars
    assert len(out) <= MAX_INPUT_CHARS
    if out:
        assert out.split()[-1] in {".", "!", "?"}  # ends with a punctuation token of its own
        assert out == " ".join(out.split())  # single spaces, no edges
    else:
        assert not clean(text)


@settings(max_examples=20, deadline=None)
@given(st.text(alphabet=".,a'b! ", min_size=1, max_size=8), st.integers(1, 3 * MAX_INPUT_CHARS))
def test_normalise_bounds_long_pastes(unit, length):
    text = (unit * (length // len(unit) + 1))[:length]
    out = normalise(text)
    assert len(out) <= MAX_INPUT_CHARS
    assert normalise(out) == out


@FAST
@given(TEXT)
def test_clean_is_idempotent(text):
    assert clean(clean(text)) == clean(text)


# ---- the tokenizer wrapper ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tokenizer():
    return train_tokenizer(["the cat sat on the mat .", "le chat s' assit sur le tapis .",
                            "der Hund bellte .", "a small bird sings ."] * 5, vocab_size=60)


@FAST
@given(text=TEXT)
def test_tokenizer_encode_decode_never_raise(tokenizer, text):
    tok = tokenizer.encode(text)
    assert len(tok.ids) == len(tok.pieces)
    assert all(0 <= i < tokenizer.vocab_size for i in tok.ids)
    assert isinstance(tokenizer.decode(tok.ids), str)
    assert all(isinstance(tokenizer.piece(i), str) for i in tok.ids)


@FAST
@given(ids=st.lists(st.integers(min_value=-5, max_value=10_000), max_size=20))
def test_tokenizer_decode_of_any_ids_is_a_value_or_a_value_error(tokenizer, ids):
    with contextlib.suppress(ValueError):
        assert isinstance(tokenizer.decode(ids), str)


# ---- the Trace readers ----------------------------------------------------------------------------------------
TOKEN = st.text(alphabet=st.characters(codec="utf-8"), max_size=6)


@st.composite
def traces(draw, beams: bool = True) -> Trace:
    n, m = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    layers, dec_layers, heads = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    floats = st.floats(0, 1, width=32)

    def arr(shape):
        return np.asarray(draw(st.lists(floats, min_size=int(np.prod(shape)), max_size=int(np.prod(shape)))),
                          dtype=np.float32).reshape(shape)

    steps = tuple(Step(draw(TOKEN), draw(st.integers(0, 999)), draw(floats),
                       tuple((draw(TOKEN), draw(floats)) for _ in range(draw(st.integers(0, 2)))))
                  for _ in range(m))
    src, dec_in, tgt = ([draw(TOKEN) for _ in range(k)] for k in (n, m, m))
    trace = Trace(model={"name": draw(TOKEN), "family": "builtin"},
                  options=DecodeOptions(mode=draw(st.sampled_from(["greedy", "teacher_forced"])),
                                        causal=draw(st.booleans())), warnings=(draw(TOKEN),),
                  source_tokens=tuple(src), decoder_input_tokens=tuple(dec_in), target_tokens=tuple(tgt),
                  encoder_self_attention=arr((layers, heads, n, n)),
                  decoder_self_attention=arr((dec_layers, heads, m, m)),
                  cross_attention=arr((dec_layers, heads, m, n)), steps=steps)
    if beams and draw(st.booleans()):
        trace = Trace(**{**trace.__dict__, "beams": (draw(traces(beams=False)),),
                         "beam_steps": (({"tokens": [draw(TOKEN)], "score": -1.5},),)})
    return trace


def same(a: Trace, b: Trace) -> None:
    assert a.to_dict() == b.to_dict()
    for kind in KINDS:
        assert np.array_equal(getattr(a, kind), getattr(b, kind))


@FAST
@given(traces())
def test_valid_traces_round_trip(tmp_path_factory, trace):
    same(Trace.from_dict(json.loads(trace.to_json())), trace)
    same(Trace.from_npz_dict(trace.to_npz_dict()), trace)
    folder = tmp_path_factory.mktemp("rt")
    for suffix in (".json", ".npz"):
        trace.save(folder / f"t{suffix}")
        same(Trace.load(folder / f"t{suffix}"), trace)


JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=12)


def garble(d: dict, draw) -> dict:
    """Replace, delete or nest values at random paths of a valid trace dict."""
    d = json.loads(json.dumps(d))
    for _ in range(draw(st.integers(1, 3))):
        node = d
        for _ in range(draw(st.integers(0, 3))):
            children = list(node.items()) if isinstance(node, dict) else list(enumerate(node)) \
                if isinstance(node, list) else []
            children = [(k, v) for k, v in children if isinstance(v, dict | list) and v]
            if not children:
                break
            node = draw(st.sampled_from(children))[1]
        keys = list(node) if isinstance(node, dict) else list(range(len(node)))
        if not keys:
            continue
        key = draw(st.sampled_from(keys))
        action = draw(st.sampled_from(["replace", "delete", "huge"]))
        if action == "delete":
            del node[key]
        elif action == "huge":
            node[key] = draw(st.sampled_from([1e308 * 10, -1e400, float("nan"), 10**40, "1e999", [[[]]], {}]))
        else:
            node[key] = draw(JSON)
    return d


@FAST
@given(st.data())
def test_garbled_trace_dicts_raise_value_error_only(data):
    trace = data.draw(traces())
    bad = garble(trace.to_dict(), data.draw)
    with contextlib.suppress(ValueError):
        Trace.from_dict(bad)


@FAST
@given(JSON)
def test_random_json_raises_value_error_only(value):
    try:
        Trace.from_dict(value)
    except ValueError:
        return
    raise AssertionError("random JSON read as a trace")


@FAST
@given(st.data())
def test_garbled_npz_dicts_raise_value_error_only(data):
    z = data.draw(traces()).to_npz_dict()
    key = data.draw(st.sampled_from(sorted(z)))
    action = data.draw(st.sampled_from(["delete", "meta", "array"]))
    if action == "delete":
        del z[key]
    elif action == "meta":
        z["meta"] = np.array(json.dumps(data.draw(JSON)))
    else:
        z[key] = np.zeros(data.draw(st.lists(st.integers(0, 3), max_size=5)), dtype=np.float32)
    with contextlib.suppress(ValueError):
        Trace.from_npz_dict(z)


@FAST
@given(st.data())
def test_random_and_truncated_files_raise_value_error_only(tmp_path_factory, data):
    folder = tmp_path_factory.mktemp("bytes")
    trace = data.draw(traces(beams=False))
    kind = data.draw(st.sampled_from(["random", "truncated", "flipped"]))
    for suffix in (".json", ".npz"):
        good = folder / f"good{suffix}"
        trace.save(good)
        blob = good.read_bytes()
        if kind == "random":
            blob = data.draw(st.binary(max_size=300))
        elif kind == "truncated":
            blob = blob[: data.draw(st.integers(0, max(len(blob) - 1, 0)))]
        else:
            i = data.draw(st.integers(0, len(blob) - 1))
            blob = blob[:i] + bytes([blob[i] ^ 0xFF]) + blob[i + 1:]
        bad = folder / f"bad{suffix}"
        bad.write_bytes(blob)
        with contextlib.suppress(ValueError):
            Trace.load(bad)


def test_npz_that_is_a_zip_of_something_else(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("meta.npy", b"\x93NUMPY garbage")
    (tmp_path / "x.npz").write_bytes(buf.getvalue())
    with pytest.raises(ValueError):
        Trace.load(tmp_path / "x.npz")
    (tmp_path / "empty.npz").write_bytes(b"")
    with pytest.raises(ValueError):
        Trace.load(tmp_path / "empty.npz")
