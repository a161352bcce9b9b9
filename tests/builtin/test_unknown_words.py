"""Words outside a shipped model's corpus: the source is read with the SOURCE vocabulary, on both pairs.

de-en's source vocabulary is larger than its target one, so reading source ids with the target tokenizer
crashed on any German word outside the corpus ("Ich liebe dich." -> `token id 779 is outside the
vocabulary`), in the CLI and in the app. en-fr's is smaller, so it showed no crash, but the same
rule must hold there.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from attention_lens.model.engine import DecodeOptions, load_engine

from tests.fixtures.checkpoints import ROOT

CASES = [("de-en", "Ich liebe dich."), ("en-fr", "I love zebras and my xylophone quietly.")]


@pytest.mark.parametrize("model,text", CASES, ids=[m for m, _ in CASES])
@pytest.mark.parametrize("mode", ["greedy", "beam"])
def test_unknown_words_trace_with_source_pieces(model, text, mode):
    engine = load_engine(ROOT / "checkpoints" / model)
    normalised, ids, pieces, _ = engine.prepare_source(text)
    assert len(pieces) - 1 > len(normalised.split())  # words the vocabulary lacks: split into several pieces
    trace = engine.trace(text, options=DecodeOptions(mode=mode, max_len=20))
    assert trace.source_tokens == tuple(pieces) == tuple(engine.source_piece(i) for i in ids)
    for beam in trace.beams:
        assert beam.source_tokens == tuple(pieces)


def test_cli_traces_german_words_outside_the_corpus(tmp_path):
    out = tmp_path / "t.json"
    proc = subprocess.run([sys.executable, "-m", "model", "trace", "--model", str(ROOT / "checkpoints" / "de-en"),
                           "--text", "Ich liebe dich.", "--out", str(out)], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # the shipped de-en's vocabulary splits the words it does not know into pieces
    assert json.loads(out.read_text(encoding="utf-8"))["source_tokens"] == [
        "▁", "ich", "▁lie", "be", "▁d", "ich", "▁.", "</s>"]
