"""The Heads ranking with many heads off in one batched pass (a head mask per row, model.builtin.ablation) gives
the figures of one full teacher-forced pass per head (Engine.head_off_nll's default), on the shipped models; and
its counts add up over shards."""

from __future__ import annotations

import numpy as np
import pytest
from attention_lens.model.analysis.ablation import HeadLosses, every_head_name, rank_heads, ranking_options
from attention_lens.model.analysis.scores import source_ids
from attention_lens.model.builtin.engine import BuiltinEngine
from attention_lens.model.corpora import read_tsv
from attention_lens.model.engine.contract import Engine

from tests.fixtures.checkpoints import ROOT

CASES = [("en-fr", ROOT / "assets/data/en-fr.test.tsv"), ("everyday-en-fr", None)]
EVERYDAY = [("Tom and Mary were frightened.", "Tom et Mary étaient effrayés."),
            ("Tom isn't busy right now.", "Tom n'est pas occupé là maintenant."),
            ("This is getting difficult.", "Ça devient difficile."),
            ("Can you help me find my keys?", "Pouvez-vous m'aider à trouver mes clés ?"),
            ("I can't believe it's already December!", "Je n'arrive pas à croire qu'on soit déjà en décembre !")]


def pairs(name, data):
    if data is None:
        return EVERYDAY
    return [(r.source, r.target) for r in read_tsv(data)[:5]]


@pytest.mark.parametrize(("name", "data"), CASES, ids=[c[0] for c in CASES])
def test_batched_ablation_equals_one_pass_per_head(name, data):
    engine = BuiltinEngine.load(ROOT / "checkpoints" / name)
    rows = pairs(name, data)
    srcs = [source_ids(engine, s) for s, _ in rows]
    labels = [engine.prepare_target(t)[0] for _, t in rows]
    heads = every_head_name(engine)
    options = ranking_options(engine)
    tokens = sum(map(len, labels))
    one_per_head = Engine.head_off_nll(engine, srcs, labels, options, heads) / tokens
    batched = engine.head_off_nll(srcs, labels, options, heads) / tokens
    assert np.abs(batched[0] - one_per_head[0]) <= 1e-5
    increase_old, increase_new = one_per_head[1:] - one_per_head[0], batched[1:] - batched[0]
    assert np.abs(increase_new - increase_old).max() <= 1e-5
    # the ranking (rank_heads, batches of 2 in length order) names the heads in the same order
    ranked = rank_heads(engine, [s for s, _ in rows], [t for _, t in rows], progress=False, batch_size=2)
    old_order = [heads[i] for i in np.argsort(-increase_old, kind="stable")]
    new_order = [f"{h['kind']}:{h['layer']}:{h['head']}" for h in ranked["heads"]]
    gaps = np.sort(increase_old)[::-1]
    for i, (a, b) in enumerate(zip(old_order, new_order)):  # a swap only between heads within 1e-5 of each other
        assert a == b or abs(gaps[i] - increase_old[heads.index(b)]) <= 1e-5
    assert abs(ranked["base_loss"] - one_per_head[0]) <= 1e-5


def test_shards_merged_equal_one_run():
    engine = BuiltinEngine.load(ROOT / "checkpoints" / "en-fr")
    rows = [(r.source, r.target) for r in read_tsv(ROOT / "assets/data/en-fr.test.tsv")[:8]]
    whole = rank_heads(engine, [s for s, _ in rows], [t for _, t in rows], progress=False, batch_size=4)
    shards = [rank_heads(engine, [s for s, _ in rows[k::4]], [t for _, t in rows[k::4]], progress=False)
              for k in range(4)]
    merged = HeadLosses.merged(shards).result()
    assert merged["n"] == whole["n"] == 8 and merged["tokens"] == whole["tokens"]
    assert merged["base_loss"] == pytest.approx(whole["base_loss"], abs=1e-6)
    got = {(h["kind"], h["layer"], h["head"]): h["loss_increase"] for h in merged["heads"]}
    for h in whole["heads"]:
        assert got[(h["kind"], h["layer"], h["head"])] == pytest.approx(h["loss_increase"], abs=1e-6)
