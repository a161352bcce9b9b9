"""Head roles (model.analysis.head_roles) on constructed traces whose heads have known patterns: a head that
always looks at the previous token, one that always looks at </s>, one spread evenly, one on its own position,
and a cross-attention head that follows the gold links."""

from __future__ import annotations

import json

import numpy as np
import pytest
from attention_lens.model.analysis.alignment.links import parse_pharaoh
from attention_lens.model.analysis.head_roles import ROLE_RULE, head_roles, is_punctuation, role, roles_of, tally_traces
from attention_lens.model.corpora import Example
from attention_lens.model.engine.options import DecodeOptions
from attention_lens.model.engine.trace import Step, Trace

SOURCE = ("▁the", "▁black", "▁cat", "▁sat", "▁.", "</s>")
TARGET = ("▁le", "▁chat", "▁noir", "▁s'", "▁assit", "▁.", "</s>")
GOLD = "0-0 1-2 2-1 3-3 3-4 4-5"  # source word - target word, as Pharaoh writes it


def pattern(kind: str, q: int, k: int, allowed: np.ndarray) -> np.ndarray:
    """(q, k) rows of one head: 'previous', 'eos' (the last key), 'uniform' over allowed keys, 'same'."""
    w = np.zeros((q, k))
    for i in range(q):
        seen = np.flatnonzero(allowed[i])
        j = {"previous": max(i - 1, 0), "eos": k - 1, "same": min(i, k - 1)}.get(kind)
        if j is None:
            w[i, seen] = 1.0 / len(seen)
        else:
            w[i, j if allowed[i, j] else seen[-1]] = 1.0
    return w


def gold_pattern(n: int, m: int) -> np.ndarray:
    """Cross-attention row t on the source word gold-aligned to target word t (row t predicts word t)."""
    gold = parse_pharaoh(GOLD)
    w = np.zeros((m, n))
    for t in range(m):
        src = [i for i, j in gold.sure if j == t]
        w[t, src if src else [n - 1]] = 1.0 / max(len(src), 1)
    return w


def constructed_trace() -> Trace:
    n, m = len(SOURCE), len(TARGET)
    causal = np.tril(np.ones((m, m), bool))
    heads = ("previous", "eos", "uniform", "same")
    enc = np.stack([pattern(h, n, n, np.ones((n, n), bool)) for h in heads])[None]
    dec = np.stack([pattern(h, m, m, causal) for h in heads])[None]
    every = np.ones((m, n), bool)
    cross = np.stack([gold_pattern(n, m), pattern("eos", m, n, every), pattern("uniform", m, n, every),
                      pattern("same", m, n, every)])[None]
    steps = tuple(Step(t, i, 1.0, ((t, 1.0),)) for i, t in enumerate(TARGET))
    return Trace(model={"name": "constructed", "family": "test", "encoder_layers": 1, "decoder_layers": 1, "heads": 4},
                 options=DecodeOptions(mode="teacher_forced"), normalised_source="the black cat sat .",
                 source_tokens=SOURCE, decoder_input_tokens=("<s>", *TARGET[:-1]), target_tokens=TARGET,
                 encoder_self_attention=enc.astype(np.float32), decoder_self_attention=dec.astype(np.float32),
                 cross_attention=cross.astype(np.float32), steps=steps)


def by_head(rows: list[dict]) -> dict[tuple[str, int], dict]:
    return {(r["kind"], r["head"]): r for r in rows}


def test_constructed_heads_are_named_by_their_pattern():
    trace = constructed_trace()
    roles = by_head(roles_of(tally_traces([trace, trace], [parse_pharaoh(GOLD)] * 2)))
    assert [roles[("enc", h)]["role"] for h in (1, 2, 3, 4)] == ["previous-token", "sink", "broad", "same-position"]
    assert [roles[("dec", h)]["role"] for h in (1, 2, 3, 4)] == ["previous-token", "same-position", "broad",
                                                                  "same-position"]
    assert [roles[("cross", h)]["role"] for h in (1, 2, 3, 4)] == ["aligning", "sink", "broad", "same-position"]
    enc_prev, enc_eos, enc_uniform = roles[("enc", 1)], roles[("enc", 2)], roles[("enc", 3)]
    assert enc_prev["previous"] == pytest.approx(5 / 6)  # row 0 has no previous token: it looks at itself
    assert enc_eos["eos"] == pytest.approx(1.0) and enc_eos["punctuation"] == pytest.approx(0.0)
    assert enc_uniform["punctuation"] == pytest.approx(1 / 6) and enc_uniform["entropy_norm"] == pytest.approx(1.0)
    assert enc_uniform["entropy"] == pytest.approx(np.log(6))
    # The gold head: every row with a gold link is wholly on the aligned source word; no gold, no figure.
    assert roles[("cross", 1)]["aligned"] == pytest.approx(1.0) and roles[("cross", 3)]["aligned"] < 0.5
    no_gold = by_head(roles_of(tally_traces([trace])))
    assert no_gold[("cross", 1)]["aligned"] is None and no_gold[("cross", 1)]["role"] != "aligning"


def test_decoder_row_zero_is_left_out():
    """With the causal mask, decoder row 0 sees only itself: counting it would credit every head with 'same'."""
    roles = by_head(roles_of(tally_traces([constructed_trace()])))
    assert roles[("dec", 1)]["same"] == pytest.approx(0.0)  # the previous-token head never looks at itself
    assert roles[("dec", 2)]["eos"] == pytest.approx(0.0)  # decoder inputs hold no </s>


def test_the_rule_in_order():
    base = dict.fromkeys(("same", "previous", "next", "first", "eos", "punctuation"), 0.0) | {
        "aligned": None, "aligned_shift": None, "entropy_norm": 0.2}
    assert role(base) == "mixed"
    assert role(base | {"first": 0.7}) == "sink"
    assert role(base | {"first": 0.7, "next": 0.5}) == "next-token"
    assert role(base | {"aligned_shift": 0.6, "previous": 0.9}) == "aligning"
    assert role(base | {"punctuation": 0.6}) == "punctuation"
    assert role(base | {"entropy_norm": 0.85}) == "broad"
    assert role(base | {"same": 0.3, "previous": 0.25, "next": 0.2, "first": 0.6}) == "local"
    assert role(base | {"same": 0.3, "previous": 0.25, "next": 0.1, "first": 0.6}) == "sink"
    assert "sink" in ROLE_RULE and is_punctuation("▁.") and is_punctuation("»") and not is_punctuation("▁a")


def test_roles_over_a_corpus_with_an_engine(tiny_engine):
    examples = [Example("the cat sat .", "le chat s' assit .", "0-0 1-1 2-2 2-3 3-4"),
                Example("the man found the bank .", "l' homme trouva la banque .", "")]
    result = head_roles(tiny_engine, examples)
    assert result["n"] == 2 and result["rule"] == ROLE_RULE
    assert len(result["heads"]) == 3 * 2 * 4  # kinds x layers x heads of the tiny model
    for h in result["heads"]:
        assert 0.0 <= h["same"] <= 1.0 + 1e-6 and h["role"]
        assert (h["aligned"] is not None) == (h["kind"] == "cross")


def test_heads_json_lists_every_heads_role(tiny_ckpt, tmp_path, capsys):
    from attention_lens.model.cli import main

    data = tmp_path / "pairs.tsv"
    data.write_text("the cat sat .\tle chat s' assit .\t0-0 1-1 2-2 2-3 3-4\n"
                    "the man found the bank .\tl' homme trouva la banque .\n")
    assert main(["heads", "--model", str(tiny_ckpt), "--data", str(data), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert {"base_loss", "heads", "roles", "role_rule"} <= set(out)
    assert {(h["kind"], h["layer"], h["head"]) for h in out["roles"]} == {
        (h["kind"], h["layer"], h["head"]) for h in out["heads"]}
    assert out["role_rule"] == ROLE_RULE and all(r["role"] for r in out["roles"])


def test_on_the_shipped_en_fr_the_upper_cross_attention_heads_align():
    """80 test pairs with gold links: the cross-attention heads of layers 2-3 mostly follow the gold word the
    row predicts, those of layer 1 none (README, "Why this token")."""
    from attention_lens.model.corpora import read_tsv
    from attention_lens.model.engine.loader import load_engine

    from tests.fixtures.checkpoints import ROOT

    result = head_roles(load_engine(ROOT / "checkpoints" / "en-fr"), read_tsv(ROOT / "assets" / "data" /
                                                                             "en-fr.test.tsv")[:80])
    cross = {(h["layer"], h["head"]): h for h in result["heads"] if h["kind"] == "cross"}
    assert sum(cross[(la, h)]["role"] == "aligning" for la in (2, 3) for h in range(1, 5)) >= 6
    assert not any(cross[(1, h)]["role"] == "aligning" for h in range(1, 5))
    assert all(cross[(3, h)]["aligned"] > 0.5 > cross[(3, h)]["aligned_shift"] for h in range(1, 5))
