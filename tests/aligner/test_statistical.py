"""The statistical aligner: word keys, IBM Model 2 in numpy on a corpus with known answers, the CLI."""

import json
import subprocess
import sys

from attention_lens.model.aligner import align_pairs, directions, word_key
from attention_lens.model.aligner.ibm2 import train_direction
from attention_lens.model.analysis.alignment import parse_pharaoh

from tests.fixtures.checkpoints import ROOT

# Every sentence is a permutation-free word-for-word translation, each word in several contexts: the EM
# must find the diagonal.
LEXICON = {"the": "le", "cat": "chat", "dog": "chien", "sees": "voit", "eats": "mange", "bird": "oiseau",
           "small": "petit", "big": "grand"}
SENTENCES = ["the cat sees the dog", "the dog eats", "the small bird sees the big cat", "the big dog sees",
             "the cat eats the bird", "the small dog eats the big bird", "the bird sees the cat"]


def _pairs():
    return [(s, " ".join(LEXICON[w] for w in s.split())) for s in SENTENCES]


def test_word_key_strips_punctuation_and_case():
    assert word_key("You.") == "you"
    assert word_key("l'homme") == "l'homme"
    assert word_key("«Bonjour»") == "bonjour"
    assert word_key("?") == "?"


def test_ibm2_finds_the_diagonal_of_a_word_for_word_corpus():
    vocab = {}
    src = [[vocab.setdefault(w, len(vocab)) for w in s.split()] for s, _ in _pairs()]
    tgt = [[vocab.setdefault("fr:" + w, len(vocab)) for w in t.split()] for _, t in _pairs()]
    links = train_direction(src, tgt, iterations=10)
    for sent, found in zip(src, links):
        assert sorted(found) == [(i, i) for i in range(len(sent))]


def test_both_directions_and_symmetrised_links_on_the_diagonal():
    forward, reverse = directions(_pairs(), backend="ibm2", iterations=10)
    for (s, _), f, r in zip(_pairs(), forward, reverse):
        diagonal = {(i, i) for i in range(len(s.split()))}
        assert f == diagonal and r == diagonal
    assert align_pairs(_pairs(), "ibm2", "intersection", 10)[0] == {(i, i) for i in range(5)}


def test_an_empty_side_gets_no_links():
    pairs = [*_pairs(), ("the cat", "")]
    assert align_pairs(pairs, "ibm2", "grow-diag-final-and", 5)[-1] == set()


def test_cli_writes_one_line_per_pair_and_scores_the_gold_column(tmp_path):
    data = tmp_path / "pairs.tsv"
    lines = [f"{s}\t{t}\t{' '.join(f'{i}-{i}' for i in range(len(s.split())))}" for s, t in _pairs()]
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "links.txt"
    run = subprocess.run([sys.executable, "-m", "model", "aligner", "--data", str(data), "--out", str(out),
                          "--backend", "ibm2", "--iterations", "10", "--json"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    summary = json.loads(run.stdout)
    assert summary["gold"]["aer"] == 0.0 and summary["gold"]["n_scored"] == len(SENTENCES)
    assert set(summary["gold_every_symmetrisation"]) >= {"intersection", "grow-diag-final-and", "forward"}
    written = out.read_text(encoding="utf-8").splitlines()
    assert len(written) == len(SENTENCES)
    assert parse_pharaoh(written[1]).sure == {(0, 0), (1, 1), (2, 2)}


def test_cli_unknown_backend_is_one_line(tmp_path):
    data = tmp_path / "pairs.tsv"
    data.write_text("a b\tc d\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "model", "aligner", "--data", str(data), "--out",
                          str(tmp_path / "x"), "--backend", "giza"], cwd=ROOT, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 2 and "invalid choice" in run.stderr and "Traceback" not in run.stderr


def test_every_run_says_which_backend_ran_and_how_to_install_eflomal(tmp_path, capsys):
    import tomllib

    from attention_lens.model.aligner import INSTALL_EFLOMAL, eflomal_available
    from attention_lens.model.cli import main

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("eflomal") for r in extras["eflomal"]) and "attention-lens[eflomal]" in INSTALL_EFLOMAL
    data = tmp_path / "pairs.tsv"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in _pairs()), encoding="utf-8")
    common = ["aligner", "--data", str(data), "--out", str(tmp_path / "links.txt"), "--json"]
    assert main([*common, "--backend", "ibm2"]) == 0
    captured = capsys.readouterr()
    assert "aligner: ibm2 (IBM Model 2 in numpy, deterministic)\n" in captured.err
    assert json.loads(captured.out)["reproducible"] is True
    assert main(common) == 0  # the default: eflomal when installed, else ibm2 and why
    captured = capsys.readouterr()
    if eflomal_available():
        assert "aligner: eflomal (sampled" in captured.err and json.loads(captured.out)["reproducible"] is False
    else:
        assert f"eflomal, the stronger default, is not installed ({INSTALL_EFLOMAL})" in captured.err
        assert main([*common, "--backend", "eflomal"]) == 2
        assert INSTALL_EFLOMAL in capsys.readouterr().err
