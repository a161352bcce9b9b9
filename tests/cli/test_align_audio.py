"""`align --audio-data` on a tiny Whisper folder: the JSON report's keys and invariants, shards that `merge`
into exactly the unsharded run, the generation config it writes, and bad input as one line."""

from __future__ import annotations

import json

import pytest
import soundfile
from attention_lens.model.cli import main

from tests.fixtures.shaped_whisper import chirp, shaped_whisper_folder

TRANSCRIPTS = ["the cat sat on the mat", "a small bird sings", "the black dog barked", "my sister reads a book"]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("clips")
    folder = shaped_whisper_folder(root / "whisper")
    lines, ctm = [], []
    for k, text in enumerate(TRANSCRIPTS):
        seconds = 1.5 + 0.4 * k
        soundfile.write(root / f"c{k}.wav", chirp(seconds, k), 16_000)
        lines.append(f"c{k}.wav\t{text}")
        words = text.split()
        step = (seconds - 0.3) / len(words)
        ctm += [f"c{k} 1 {0.2 + i * step:.3f} {step * 0.8:.3f} {w}" for i, w in enumerate(words)]
    (root / "list.tsv").write_text("\n".join(lines) + "\n")
    (root / "gold.ctm").write_text("\n".join(ctm) + "\n")
    return root, folder


def run_json(capsys, *argv):
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.slow
def test_align_audio_json_ranks_every_head_and_chooses_a_set(data, capsys, tmp_path):
    root, folder = data
    out = tmp_path / "gen.json"
    r = run_json(capsys, "align", "--model", str(folder), "--audio-data", str(root / "list.tsv"), "--timings",
                 str(root / "gold.ctm"), "--json", "--quiet", "--generation-config", str(out))
    assert r["selection"]["source"] == "first half" and r["selection"]["chosen_on"] == 2
    assert r["n_clips"] == 2 and r["n_words"] == 9  # the second half's words
    assert 0 <= r["within_100ms"] <= 1 and r["median_start_error_ms"] >= 0
    assert len(r["heads"]) == 2 * 4 and all(h["n_words"] == 9 for h in r["heads"])
    medians = [h["median_start_error_ms"] for h in r["heads"]]
    assert medians == sorted(medians)  # best first
    assert r["alignment_heads"] and all(len(h) == 2 for h in r["alignment_heads"])
    means = [c["mean_start_error_ms"] for c in r["clips"]]
    assert means == sorted(means, reverse=True)  # worst first
    assert all(len(c["words"]) == c["n_words"] for c in r["clips"])
    assert sum(row["n_words"] for row in r["breakdown"]["position"]) == 9
    assert json.loads(out.read_text())["alignment_heads"] == r["alignment_heads"]


@pytest.mark.slow
def test_shards_merge_into_the_whole_run(data, capsys, tmp_path):
    root, folder = data
    argv = ["align", "--model", str(folder), "--audio-data", str(root / "list.tsv"), "--timings",
            str(root / "gold.ctm"), "--alignment-heads", "1:0,0:3", "--json", "--quiet"]
    whole = run_json(capsys, *argv)
    assert whole["selection"]["source"] == "given" and whole["n_clips"] == 4
    paths = []
    for k in (1, 2):
        part = run_json(capsys, *argv, "--shard", f"{k}/2")
        paths.append(tmp_path / f"s{k}.json")
        paths[-1].write_text(json.dumps(part))
    merged = run_json(capsys, "merge", *map(str, paths))
    for key in ("n_clips", "n_words", "median_start_error_ms", "mean_start_error_ms", "within_100ms", "heads",
                "mean_of_heads", "alignment_heads", "breakdown", "clips"):
        assert merged[key] == whole[key], key


@pytest.mark.slow
def test_bad_heads_and_text_models_are_one_line(data, capsys, tiny_ckpt):
    root, folder = data
    argv = ["align", "--audio-data", str(root / "list.tsv"), "--timings", str(root / "gold.ctm"), "--quiet"]
    assert main([*argv, "--model", str(folder), "--alignment-heads", "5:0"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: --alignment-heads 5:0: this model has 2 decoder layers x 4 heads (0-based)"
    assert main([*argv, "--model", str(tiny_ckpt)]) == 2
    assert "reads text: --audio-data needs a speech model" in capsys.readouterr().err


@pytest.mark.slow
def test_shards_choosing_on_a_selection_list_merge_into_the_whole_run(data, capsys, tmp_path):
    root, folder = data
    select = root / "select.tsv"
    select.write_text("\n".join((root / "list.tsv").read_text().splitlines()[:2]) + "\n")
    argv = ["align", "--model", str(folder), "--audio-data", str(root / "list.tsv"), "--timings",
            str(root / "gold.ctm"), "--select-on", str(select), "--json", "--quiet"]
    whole = run_json(capsys, *argv)
    assert whole["selection"]["source"] == "select.tsv" and whole["selection"]["chosen_on"] == 2
    assert whole["n_clips"] == 4
    paths = []
    for k in (1, 2):
        part = run_json(capsys, *argv, "--shard", f"{k}/2")
        assert part["alignment_heads"] == whole["alignment_heads"]  # every shard chose the same set
        paths.append(tmp_path / f"s{k}.json")
        paths[-1].write_text(json.dumps(part))
    merged = run_json(capsys, "merge", *map(str, paths))
    for key in ("n_words", "median_start_error_ms", "within_100ms", "heads", "mean_of_heads", "clips"):
        assert merged[key] == whole[key], key


@pytest.mark.slow
def test_shards_timed_by_different_rows_are_not_added_up(data, capsys, tmp_path):
    root, folder = data
    argv = ["align", "--model", str(folder), "--audio-data", str(root / "list.tsv"), "--timings",
            str(root / "gold.ctm"), "--alignment-heads", "1:0,0:3", "--json", "--quiet"]
    paths = []
    for k, rows in ((1, "reading"), (2, "predicting")):
        part = run_json(capsys, *argv, "--shard", f"{k}/2", "--token-rows", rows)
        assert part["merge"]["token_rows"] == rows
        paths.append(tmp_path / f"s{k}.json")
        paths[-1].write_text(json.dumps(part))
    assert main(["merge", *map(str, paths)]) == 2
    assert "timed tokens by different rows (--token-rows)" in capsys.readouterr().err
